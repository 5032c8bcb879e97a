#pragma once
// Who may use a managed master's admin API (docs/security.md, "The store's admin API"). The
// master's own admin listener is bound to the leader Pod's loopback (`-metrics_host=127.0.0.1`,
// port kMasterLoopbackAdminPort); `kvcache store leader` serves the admin port (9003) in front of
// it over mutual TLS. A client certificate the store CA signed names its caller (common name)
// and the caller's group (organization), as Kubernetes reads client certificates:
//
//   kvcache:operator   every route: the ledger (/api/v1/tenant_quotas), remove_all, the reads
//   kvcache:metrics    GET /metrics and /metrics/summary only (a scraper)
//
// Anyone else, and every other method or route of a scraper, is refused (403). The certificates
// are the operator's to keep (policy/store/store_credentials.h).

#include <string>
#include <string_view>

namespace kvc::policy {

// The master's admin listener inside the leader Pod, reached by the proxy only.
inline constexpr int kMasterLoopbackAdminPort = 9013;
inline constexpr std::string_view kMasterLoopbackHost = "127.0.0.1";

inline constexpr std::string_view kAdminOperatorGroup = "kvcache:operator";
inline constexpr std::string_view kAdminMetricsGroup = "kvcache:metrics";

struct AdminAccess {
  bool allowed = false;
  std::string reason;  // why not, for the 403 and the log ("" when allowed)
};

// Whether a caller of `group` (the certificate's organization; "" without one) may send
// `method` to `path` (without the query).
AdminAccess adminAccess(std::string_view group, std::string_view method, std::string_view path);

}  // namespace kvc::policy
