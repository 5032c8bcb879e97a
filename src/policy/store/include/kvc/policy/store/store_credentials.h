#pragma once
// The certificates of the managed stores' admin API (admin_access.h), kept by the operator in
// the store namespace:
//
//   kvcache-store-ca              ca.crt, ca.key    the CA; mounted nowhere
//   kvcache-store-admin-tls       tls.crt, tls.key, ca.crt
//                                 the leaders' serving certificate, for *.<ns>.svc and
//                                 *.<ns>.svc.cluster.local (every <b>-leader Service); every leader
//                                 Pod mounts it, and trusts client certificates of ca.crt
//   kvcache-store-operator-client tls.crt, tls.key, ca.crt
//                                 CN kvcache-operator, O kvcache:operator: the operator's own
//                                 (`kvcache store status` reads it too)
//   kvcache-store-metrics-client  tls.crt, tls.key, ca.crt
//                                 CN from the Setting kv-cache-store-metrics-identity, O
//                                 kvcache:metrics: for a scraper an administrator points at it
//
// Renewal as the webhook's (webhook_certificate.h): at two thirds of a lifetime, one year for the
// leaves and ten for the CA. A new CA re-issues every leaf. Leaves renewed under the same CA are
// taken without a restart: the leaders re-read their files (the kubelet updates a Secret volume
// within about a minute), the operator reads its Secret on every use.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/certificate_facts.h"

namespace kvc::policy {

inline constexpr std::string_view kStoreCaSecret = "kvcache-store-ca";
inline constexpr std::string_view kStoreAdminTlsSecret = "kvcache-store-admin-tls";
inline constexpr std::string_view kStoreOperatorClientSecret = "kvcache-store-operator-client";
inline constexpr std::string_view kStoreMetricsClientSecret = "kvcache-store-metrics-client";
inline constexpr std::string_view kStoreOperatorIdentity = "kvcache-operator";
inline constexpr std::string_view kDefaultStoreMetricsIdentity = "kvcache-store-metrics";
// Where a leader Pod mounts kvcache-store-admin-tls.
inline constexpr std::string_view kAdminTlsMountDir = "/etc/kvcache/admin-tls";

inline constexpr std::chrono::hours kStoreCaValidity{24 * 365 * 10};
inline constexpr std::chrono::hours kStoreLeafValidity{24 * 365};

// The serving certificate's names: every Service of the store namespace.
std::vector<std::string> storeAdminDnsNames(const std::string& namespace_name);

// What the Secrets hold, read back (nullopt: absent or unreadable).
struct StoreCredentialState {
  std::optional<CertificateFacts> ca;
  std::optional<CertificateFacts> serving;
  std::optional<CertificateFacts> operator_client;
  std::optional<CertificateFacts> metrics_client;
};

// What to issue; each reason says why (for the log).
struct StoreCredentialPlan {
  bool ca = false;  // a new CA, and then every leaf
  bool serving = false;
  bool operator_client = false;
  bool metrics_client = false;
  std::vector<std::string> reasons;

  bool any() const { return ca || serving || operator_client || metrics_client; }
};

StoreCredentialPlan planStoreCredentials(const StoreCredentialState& state,
                                         const std::string& namespace_name,
                                         const std::string& metrics_identity, SystemTime now);

}  // namespace kvc::policy
