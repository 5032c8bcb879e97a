#pragma once
// GET /metrics of the Mooncake master: a strict Prometheus text (0.0.4) parser and the figures
// the operator reads from it.
//
// Strictness is the point (reference/contract.md §6): blank and `#` lines are skipped; a sample
// is `name[{labels}] value [timestamp]`; values are non-negative integers below 2^63 (NaN, Inf,
// signs, fractions and exponents are errors); label values honour quotes and the escapes \\ \"
// \n; a series may appear once. One malformed line fails the whole scrape, which also guards
// against a truncated body, and a non-empty body without a single sample is malformed.
//
// Absent is not zero: every figure is an optional, empty when its family was not in the scrape.
//
// Families by master version (reference/mooncake.md §4):
//   every multi-tenant master   mooncake_tenant_quota_{requested_bytes,effective_bytes,
//                               over_quota,explicit_policy}{tenant_id}
//   0.3.12, 0.3.12.post1        mooncake_tenant_quota_{used_bytes,reserved_bytes,committed_count,
//                               metadata_object_count}{tenant_id}
//   0.3.13 and later            mooncake_tenant_quota_{charged_bytes,admission_closed}{tenant_id}
// The tenant block is emitted only while multi-tenancy is on. Tenant series must carry a
// non-empty `tenant_id`; the global families listed below, seen with labels, are skipped.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvc/store/error.h"

namespace kvc::store {

// Family names (wire strings).
inline constexpr std::string_view kMetricTotalCapacity = "master_total_capacity_bytes";
inline constexpr std::string_view kMetricAllocated = "master_allocated_bytes";
inline constexpr std::string_view kMetricTotalFileCapacity = "master_total_file_capacity_bytes";
inline constexpr std::string_view kMetricAllocatedFile = "master_allocated_file_size_bytes";
inline constexpr std::string_view kMetricKeyCount = "master_key_count";
inline constexpr std::string_view kMetricActiveClients = "master_active_clients";
inline constexpr std::string_view kMetricPutStartRequests = "master_put_start_requests_total";
inline constexpr std::string_view kMetricPutEndRequests = "master_put_end_requests_total";
inline constexpr std::string_view kMetricPutRevokeRequests = "master_put_revoke_requests_total";
// The batch writes' objects: the engines' connectors write in batches (vLLM
// batch_put_from_multi_buffers, SGLang batch_put_from), which the counters above never see.
inline constexpr std::string_view kMetricBatchPutStartItems = "master_batch_put_start_items_total";
inline constexpr std::string_view kMetricBatchPutEndItems = "master_batch_put_end_items_total";
inline constexpr std::string_view kMetricBatchPutRevokeItems =
    "master_batch_put_revoke_items_total";
inline constexpr std::string_view kMetricRemountRequests = "master_remount_segment_requests_total";
inline constexpr std::string_view kMetricSegmentCapacity = "segment_total_capacity_bytes";
inline constexpr std::string_view kMetricSegmentAllocated = "segment_allocated_bytes";
inline constexpr std::string_view kMetricAllocatableCapacity =
    "mooncake_tenant_quota_allocatable_capacity_bytes";
inline constexpr std::string_view kMetricRequestedSum = "mooncake_tenant_quota_requested_bytes_sum";
inline constexpr std::string_view kMetricEffectiveSum = "mooncake_tenant_quota_effective_bytes_sum";

struct MetricSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written
  std::int64_t value = 0;

  // The value of label `key`, or nullptr.
  const std::string* label(std::string_view key) const;
};

// Per-tenant figures; each is empty when its family had no series for the tenant.
struct TenantMetrics {
  std::optional<std::int64_t> requested_bytes;
  std::optional<std::int64_t> effective_bytes;
  std::optional<std::int64_t> over_quota;       // 0 | 1
  std::optional<std::int64_t> explicit_policy;  // 0 | 1
  // 0.3.12 and 0.3.12.post1.
  std::optional<std::int64_t> used_bytes;  // committed memory replicas
  std::optional<std::int64_t> reserved_bytes;
  std::optional<std::int64_t> committed_count;
  std::optional<std::int64_t> metadata_object_count;
  // 0.3.13 and later.
  std::optional<std::int64_t> charged_bytes;     // committed plus in-flight memory replicas
  std::optional<std::int64_t> admission_closed;  // 0 | 1
  // Counters.
  std::map<std::string, std::int64_t> reject_total;  // by `reason` ("" when unlabelled)
  std::optional<std::int64_t> evict_bytes_total;

  // Occupancy as the operator reports it: `used_bytes` when present (committed only), otherwise
  // `charged_bytes` (includes in-flight writes); empty when neither was scraped.
  std::optional<std::int64_t> occupancyBytes() const;
  // True when the figure came from `charged_bytes`, which counts uncommitted writes.
  bool occupancyIncludesInFlight() const { return !used_bytes && charged_bytes.has_value(); }
};

enum class LedgerGeneration {
  None,     // no per-tenant occupancy family: multi-tenancy off, or no tenant yet
  Used,     // 0.3.12.x: used/reserved/committed/metadata families
  Charged,  // 0.3.13+: charged/admission_closed families
};

struct StoreMetrics {
  // Master-wide gauges and counters.
  std::optional<std::int64_t> total_capacity_bytes;
  std::optional<std::int64_t> allocated_bytes;
  std::optional<std::int64_t> total_file_capacity_bytes;
  std::optional<std::int64_t> allocated_file_size_bytes;
  std::optional<std::int64_t> key_count;
  std::optional<std::int64_t> active_clients;
  std::optional<std::int64_t> put_start_requests_total;
  std::optional<std::int64_t> put_end_requests_total;
  std::optional<std::int64_t> put_revoke_requests_total;
  std::optional<std::int64_t> batch_put_start_items_total;
  std::optional<std::int64_t> batch_put_end_items_total;
  std::optional<std::int64_t> batch_put_revoke_items_total;
  std::optional<std::int64_t> remount_segment_requests_total;
  // The ledger-wide figures (multi-tenant masters only).
  std::optional<std::int64_t> allocatable_capacity_bytes;
  std::optional<std::int64_t> requested_bytes_sum;
  std::optional<std::int64_t> effective_bytes_sum;
  // Per segment name.
  std::map<std::string, std::int64_t> segment_capacity_bytes;
  std::map<std::string, std::int64_t> segment_allocated_bytes;
  // Per tenant id, every tenant that appeared in any tenant family.
  std::map<std::string, TenantMetrics> tenants;
  // Every sample of the scrape, in order, for families not typed above.
  std::vector<MetricSample> samples;

  // The value of the unlabelled series `name`, or empty when absent.
  std::optional<std::int64_t> value(std::string_view name) const;
  // Which per-tenant occupancy families the scrape carried.
  LedgerGeneration ledgerGeneration() const;
  // True when any tenant family or ledger-wide figure was present.
  bool hasTenantBlock() const;
};

// Parses a scrape. Failures are MalformedBody naming the line ("metrics line 12: ...").
StoreResult<StoreMetrics> parseMetrics(std::string_view text);

}  // namespace kvc::store
