#pragma once
// The Mooncake master's admin API (the --metrics_port, 9003 by default), as the operator uses it.
//
// AdminClient is the interface controllers depend on (a fake implements it in their tests);
// HttpAdminClient talks HTTP to a real master. Every request has its own deadline, follows no
// redirect and reads at most 8 MiB (http.h). Failures are typed (error.h): a 503 on any route
// but /health is ServicePlaneInactive, any other non-200 is UnexpectedStatus with an excerpt of
// at most 512 characters, and a 200 whose body breaks the rules is MalformedBody.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/status.h"
#include "kvc/store/error.h"
#include "kvc/store/health.h"
#include "kvc/store/http.h"
#include "kvc/store/ledger.h"
#include "kvc/store/metrics.h"
#include "kvc/store/segments.h"

namespace kvc::store {

// Routes (wire strings).
inline constexpr std::string_view kHealthPath = "/health";
inline constexpr std::string_view kMetricsPath = "/metrics";
inline constexpr std::string_view kSegmentsDetailPath = "/get_segments_detail";
inline constexpr std::string_view kTenantQuotasPath = "/api/v1/tenant_quotas";

class AdminClient {
public:
  virtual ~AdminClient() = default;

  // host:port of the admin server.
  virtual const std::string& address() const = 0;

  // GET /health. Not gated: answers on standbys too; read `service_ready`.
  virtual StoreResult<Health> health() = 0;
  // GET /metrics, strictly parsed.
  virtual StoreResult<StoreMetrics> metrics() = 0;
  // GET /get_segments_detail. A master older than 0.3.12 answers RouteNotServed.
  virtual StoreResult<SegmentListing> segments() = 0;

  // GET /api/v1/tenant_quotas: every tenant with an explicit policy or a charge, sorted.
  virtual StoreResult<std::vector<TenantQuota>> listTenantQuotas() = 0;
  // GET ?tenant_id=: TenantNotFound when the master has no account for the tenant.
  virtual StoreResult<TenantQuota> getTenantQuota(std::string_view tenant_id) = 0;
  // PUT ?tenant_id= {"requested_quota_bytes": N}: upsert; the answer is the entry after the
  // recut. The master judges the quota (1 ≤ N ≤ 2^63-1) and answers InvalidParams otherwise.
  virtual StoreResult<TenantQuota> putTenantQuota(std::string_view tenant_id,
                                                  std::int64_t requested_bytes) = 0;
  // DELETE ?tenant_id=: removes the explicit policy. TenantNotFound when there was none,
  // TenantNotEmpty while the tenant still holds objects or charge (the policy stays). The
  // answer's entry, when the master sends one.
  virtual StoreResult<std::optional<TenantQuota>> deleteTenantQuota(std::string_view tenant_id) = 0;
};

struct AdminClientOptions {
  std::chrono::milliseconds timeout = kDefaultRequestTimeout;  // per request
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  // Set: https:// with mutual TLS (a managed master's admin proxy); unset: http://.
  std::shared_ptr<const TlsCredentials> tls;
  // See HttpRequest::connect_to.
  std::string connect_to;
};

// Checks an admin address: `host:port` (IPv6 as `[addr]:port`), port 1..65535, no scheme, path
// or whitespace.
Status validateAdminAddress(std::string_view address);

// Percent-encodes a query value (RFC 3986 unreserved characters pass through).
std::string percentEncode(std::string_view value);

class HttpAdminClient final : public AdminClient {
public:
  // Fails with InvalidArgument when the address is not host:port. Without a transport, libcurl
  // is used.
  static Result<std::unique_ptr<HttpAdminClient>> create(
      std::string_view admin_address, AdminClientOptions options = {},
      std::shared_ptr<HttpTransport> transport = nullptr);

  // AdminClient
  const std::string& address() const override { return address_; }
  StoreResult<Health> health() override;
  StoreResult<StoreMetrics> metrics() override;
  StoreResult<SegmentListing> segments() override;
  StoreResult<std::vector<TenantQuota>> listTenantQuotas() override;
  StoreResult<TenantQuota> getTenantQuota(std::string_view tenant_id) override;
  StoreResult<TenantQuota> putTenantQuota(std::string_view tenant_id,
                                          std::int64_t requested_bytes) override;
  StoreResult<std::optional<TenantQuota>> deleteTenantQuota(std::string_view tenant_id) override;

private:
  HttpAdminClient(std::string address, AdminClientOptions options,
                  std::shared_ptr<HttpTransport> transport);

  // One exchange with the master; `path` includes the query.
  StoreResult<HttpResponse> exchange(std::string_view method, const std::string& path,
                                     std::string body = {});
  // GET of a service route that must answer 200 (503 -> ServicePlaneInactive).
  StoreResult<std::string> getOk(std::string_view path, bool gated);
  // Sends a ledger request and classifies a refusal; returns the 200 body.
  StoreResult<std::string> ledger(std::string_view method, std::string_view tenant_id,
                                  std::string body, std::string_view what);

  std::string address_;
  AdminClientOptions options_;
  std::shared_ptr<HttpTransport> transport_;
};

}  // namespace kvc::store
