// Who may use a managed master's admin API, and when the operator issues the certificates that
// say so.
#include <gtest/gtest.h>

#include "kvc/policy/store/admin_access.h"
#include "kvc/policy/store/store_credentials.h"

namespace kvc::policy {
namespace {

using namespace std::chrono_literals;

TEST(AdminAccess, TheOperatorMayUseEveryRoute) {
  for (const char* method : {"GET", "PUT", "DELETE", "POST"}) {
    EXPECT_TRUE(adminAccess("kvcache:operator", method, "/api/v1/tenant_quotas").allowed);
  }
  EXPECT_TRUE(adminAccess("kvcache:operator", "POST", "/api/v1/remove_all").allowed);
}

TEST(AdminAccess, AScraperMayOnlyReadMetrics) {
  EXPECT_TRUE(adminAccess("kvcache:metrics", "GET", "/metrics").allowed);
  EXPECT_TRUE(adminAccess("kvcache:metrics", "GET", "/metrics/summary").allowed);
  const AdminAccess put = adminAccess("kvcache:metrics", "PUT", "/api/v1/tenant_quotas");
  EXPECT_FALSE(put.allowed);
  EXPECT_EQ(put.reason,
            "group kvcache:metrics may only GET /metrics and /metrics/summary, not PUT "
            "/api/v1/tenant_quotas");
  EXPECT_FALSE(adminAccess("kvcache:metrics", "GET", "/api/v1/tenant_quotas").allowed);
  EXPECT_FALSE(adminAccess("kvcache:metrics", "POST", "/metrics").allowed);
}

TEST(AdminAccess, AnyoneElseIsRefused) {
  EXPECT_EQ(adminAccess("", "GET", "/metrics").reason, "the client certificate names no group");
  EXPECT_EQ(adminAccess("system:masters", "GET", "/health").reason,
            "group system:masters has no access");
}

CertificateFacts leaf(SystemTime now, std::vector<std::string> names = {}, std::string cn = "",
                      std::string o = "") {
  CertificateFacts facts;
  facts.not_before = now - 24h;
  facts.not_after = now + 24h * 300;
  facts.dns_names = std::move(names);
  facts.common_name = std::move(cn);
  facts.organization = std::move(o);
  facts.signed_by_ca = true;
  facts.key_matches = true;
  return facts;
}

StoreCredentialState goodState(SystemTime now) {
  StoreCredentialState state;
  state.ca = leaf(now);
  state.ca->not_after = now + 24h * 3000;
  state.serving = leaf(now, storeAdminDnsNames("gpustack-system"));
  state.operator_client = leaf(now, {}, "kvcache-operator", "kvcache:operator");
  state.metrics_client = leaf(now, {}, "kvcache-store-metrics", "kvcache:metrics");
  return state;
}

TEST(StoreCredentials, GoodCertificatesAreKept) {
  const auto now = std::chrono::system_clock::now();
  const StoreCredentialPlan plan =
      planStoreCredentials(goodState(now), "gpustack-system", "kvcache-store-metrics", now);
  EXPECT_FALSE(plan.any());
  EXPECT_TRUE(plan.reasons.empty());
  EXPECT_EQ(storeAdminDnsNames("ns"),
            (std::vector<std::string>{"*.ns.svc", "*.ns.svc.cluster.local"}));
}

TEST(StoreCredentials, NoCaIssuesEverything) {
  const auto now = std::chrono::system_clock::now();
  const StoreCredentialPlan plan =
      planStoreCredentials({}, "gpustack-system", "kvcache-store-metrics", now);
  EXPECT_TRUE(plan.ca && plan.serving && plan.operator_client && plan.metrics_client);
  ASSERT_EQ(plan.reasons.size(), 1U);
  EXPECT_EQ(plan.reasons[0],
            "kvcache-store-ca: absent or unreadable; every certificate is issued anew");
}

TEST(StoreCredentials, EachLeafIsRenewedOnItsOwn) {
  const auto now = std::chrono::system_clock::now();
  StoreCredentialState state = goodState(now);
  state.serving->not_before = now - 24h * 265;
  state.serving->not_after = now + 24h * 100;        // 100 of 365 days left: under a third
  state.metrics_client->common_name = "prometheus";  // the Setting names another scraper
  const StoreCredentialPlan plan =
      planStoreCredentials(state, "gpustack-system", "kvcache-store-metrics", now);
  EXPECT_FALSE(plan.ca);
  EXPECT_TRUE(plan.serving);
  EXPECT_FALSE(plan.operator_client);
  EXPECT_TRUE(plan.metrics_client);
  EXPECT_EQ(plan.reasons,
            (std::vector<std::string>{
                "kvcache-store-admin-tls: expires within a third of its lifetime",
                "kvcache-store-metrics-client: names prometheus of kvcache:metrics, not "
                "kvcache-store-metrics of kvcache:metrics"}));
  state = goodState(now);
  state.operator_client->signed_by_ca = false;
  state.serving->dns_names = storeAdminDnsNames("other");
  const StoreCredentialPlan again =
      planStoreCredentials(state, "gpustack-system", "kvcache-store-metrics", now);
  EXPECT_TRUE(again.serving && again.operator_client && !again.metrics_client);
}

}  // namespace
}  // namespace kvc::policy
