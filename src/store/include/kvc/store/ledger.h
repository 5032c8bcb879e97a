#pragma once
// The master's tenant ledger, /api/v1/tenant_quotas: its entries, and how its answers are
// classified.
//
// Two JSON generations exist (reference/mooncake.md §3.1) and both are read:
//   0.3.12, 0.3.12.post1  used_bytes, reserved_bytes, committed_count, metadata_object_count
//   0.3.13 and later      charged_bytes, admission_closed
// The stable fields are requested_quota_bytes, effective_quota_bytes, over_quota and
// has_explicit_policy; they are required.
//
// Refusals are classified by (HTTP status, error_code) and never by message text:
//   409 -1011 MultiTenancyDisabled   400 -600 InvalidParams      404 -704 TenantNotFound
//   409 -1702 TenantNotEmpty         409 -1010 TransientState     500 -1503 PersistFailed
//   503 (any body) ServicePlaneInactive
// A 404 means "absent" only with -704: a bare 404, an HTML page or -1701 is an error, so a
// missing route can never pass for a deleted tenant.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/store/error.h"

namespace kvc::store {

struct TenantQuota {
  std::string tenant_id;
  std::int64_t requested_quota_bytes = 0;
  std::int64_t effective_quota_bytes = 0;  // the grant
  bool over_quota = false;                 // charged > effective (after capacity shrank)
  bool has_explicit_policy = false;        // false: an orphan account (charge without policy)
  // 0.3.12.x.
  std::optional<std::int64_t> used_bytes;
  std::optional<std::int64_t> reserved_bytes;
  std::optional<std::int64_t> committed_count;
  std::optional<std::int64_t> metadata_object_count;
  // 0.3.13+.
  std::optional<std::int64_t> charged_bytes;
  std::optional<bool> admission_closed;

  // `used_bytes` when present (committed only), otherwise `charged_bytes`.
  std::optional<std::int64_t> occupancyBytes() const;
};

// Bodies of 200 answers: {"success":true,"data":...}.
StoreResult<std::vector<TenantQuota>> parseTenantQuotaList(std::string_view body);
StoreResult<TenantQuota> parseTenantQuotaEntry(std::string_view body);
// DELETE: `data` may be an entry, null or absent.
StoreResult<std::optional<TenantQuota>> parseTenantQuotaDeleted(std::string_view body);

// Classifies a non-200 answer of a ledger route. `what` names the action for the message
// ("reading the tenant ledger", "writing the quota of reuse domain \"team-a\"", ...).
StoreError classifyLedgerRefusal(int http_status, std::string_view body, std::string_view what);

}  // namespace kvc::store
