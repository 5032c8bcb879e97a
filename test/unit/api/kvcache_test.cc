#include "kvc/api/kvcache.h"

#include <gtest/gtest.h>

#include "kvc/api/settings.h"
#include "kvc/api/transport.h"

namespace kvc::api {
namespace {

TEST(Transport, MapsBothSpellings) {
  EXPECT_EQ(artifactProtocol("Auto"), "tcp");
  EXPECT_EQ(artifactProtocol("CANN"), "ascend");
  EXPECT_EQ(artifactProtocol("ROCM"), "hip");
  EXPECT_EQ(artifactProtocol("cann"), std::nullopt);  // the enum is case-sensitive
  EXPECT_EQ(apiProtocolFor("ascend"), "CANN");
  EXPECT_EQ(apiProtocolFor("tcp"), "TCP");
}

TEST(Backend, AppliesSchemaDefaults) {
  const auto backend = backendFromJson(Json::parse(R"({
    "metadata": {"name": "mooncake-dram"},
    "spec": {"connection": {"managed": {"leader": {}, "members": [{"medium": "DRAM",
             "capacityPerMember": "8Gi", "nodeSelector": {}}]}}}})"));
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  EXPECT_EQ(backend->spec.type, "Mooncake");
  EXPECT_EQ(backend->spec.transport_protocol, "Auto");
  EXPECT_TRUE(backend->spec.multi_tenancy);
  EXPECT_EQ(offeredTransports(*backend), std::vector<std::string>{"tcp"});
}

TEST(Backend, GroupProtocolOverridesTheBackendUnlessAuto) {
  const auto backend = backendFromJson(Json::parse(R"({
    "metadata": {"name": "b"},
    "spec": {"transport": {"protocol": "RDMA"}, "connection": {"managed": {"leader": {},
      "members": [{"medium": "DRAM"}, {"medium": "DRAM", "transport": {"protocol": "CANN"}},
                  {"medium": "DRAM", "transport": {"protocol": "Auto"}}]}}}})"));
  ASSERT_TRUE(backend.ok());
  EXPECT_EQ(offeredTransports(*backend), (std::vector<std::string>{"ascend", "rdma"}));
}

TEST(Backend, RefusesAProtocolOutsideTheEnumNamingTheField) {
  const auto backend = backendFromJson(
      Json::parse(R"({"metadata": {"name": "b"}, "spec": {"transport": {"protocol": "tcp"}}})"));
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.status().message().find("spec.transport.protocol"), std::string::npos);
}

TEST(Binding, DefaultsTheDomainNameAndReadsDeletion) {
  const auto binding = bindingFromJson(Json::parse(R"({
    "metadata": {"name": "team-a", "namespace": "team-a", "deletionTimestamp": "2026-11-29T00:00:00Z"},
    "spec": {"poolRef": {"name": "shared-dram"}, "quota": {"ceiling": "8Gi"},
             "domain": {"blockSize": 64, "dtype": "bfloat16"}}})"));
  ASSERT_TRUE(binding.ok());
  EXPECT_EQ(binding->spec.domain.name, "default");
  EXPECT_TRUE(binding->metadata.deleting);
  EXPECT_EQ(binding->spec.pool_ref, "shared-dram");
}

TEST(Binding, WrongTypesNameTheirPath) {
  const auto binding = bindingFromJson(
      Json::parse(R"({"metadata": {"name": "x"}, "spec": {"domain": {"blockSize": "64"}}})"));
  ASSERT_FALSE(binding.ok());
  EXPECT_EQ(binding.status().message(), "spec.domain.blockSize must be an integer, not string");
}

TEST(Pool, ReadsConditionsAndEndpoint) {
  const auto pool = poolFromJson(Json::parse(R"({
    "metadata": {"name": "p"}, "spec": {"backends": ["b"], "quota": {"total": "16Gi"}},
    "status": {"clientEndpoint": "b-leader:50051", "conditions": [
      {"type": "QuotaLedgerAvailable", "status": "False", "reason": "MultiTenancyDisabled"}]}})"));
  ASSERT_TRUE(pool.ok());
  const Condition* ledger = findCondition(pool->status.conditions, "QuotaLedgerAvailable");
  ASSERT_NE(ledger, nullptr);
  EXPECT_EQ(ledger->reason, "MultiTenancyDisabled");
  EXPECT_EQ(pool->status.client_endpoint, "b-leader:50051");
}

TEST(Settings, ReadsTheCatalogueAndWarnsOnUnknownKeys) {
  const auto settings = settingsFromConfigMap(Json::parse(R"({"data": {
    "model-deployment-kv-cache-dtype-owned": "false", "kv-cache-backend-image": "x:1",
    "typo-setting": "1"}})"));
  ASSERT_TRUE(settings.ok());
  EXPECT_FALSE(settings->settings.kv_cache_dtype_owned);
  EXPECT_EQ(settings->settings.kv_cache_backend_image, "x:1");
  ASSERT_EQ(settings->warnings.size(), 1u);
}

TEST(Settings, RefusesAMalformedBooleanNamingTheKey) {
  const auto settings = settingsFromConfigMap(
      Json::parse(R"({"data": {"model-deployment-kv-cache-dtype-owned": "yes"}})"));
  ASSERT_FALSE(settings.ok());
  EXPECT_NE(settings.status().message().find("model-deployment-kv-cache-dtype-owned"),
            std::string::npos);
}

TEST(Settings, DefaultsWhenAbsent) {
  const auto settings = settingsFromConfigMap(Json::object());
  ASSERT_TRUE(settings.ok());
  EXPECT_TRUE(settings->settings.kv_cache_dtype_owned);
  EXPECT_EQ(settings->settings.kv_cache_backend_image, kDefaultBackendImage);
  EXPECT_EQ(settings->settings.leader_lease, std::chrono::seconds(4));
  EXPECT_TRUE(settings->settings.engine_metrics);
  EXPECT_EQ(settings->settings.unused_after, std::chrono::minutes(10));
}

TEST(Settings, TheEngineMetricsReadingTurnsOff) {
  const auto settings =
      settingsFromConfigMap(Json{{"data", {{"kv-cache-engine-metrics", "false"}}}});
  ASSERT_TRUE(settings.ok());
  EXPECT_FALSE(settings->settings.engine_metrics);
  EXPECT_FALSE(settingsFromConfigMap(Json{{"data", {{"kv-cache-engine-metrics", "no"}}}}).ok());
}

TEST(Settings, TheUnusedWindowIsSecondsMinutesOrHoursFromTenSecondsToADay) {
  for (const auto& [value, seconds] : {std::pair{"10s", 10}, std::pair{"90s", 90},
                                       std::pair{"10m", 600}, std::pair{"24h", 86400}}) {
    const auto settings = settingsFromConfigMap(Json{{"data", {{"kv-cache-unused-after", value}}}});
    ASSERT_TRUE(settings.ok()) << value;
    EXPECT_EQ(settings->settings.unused_after, std::chrono::seconds(seconds));
  }
  for (const char* value : {"9s", "25h", "10", "1.5m", "10d", "m", "", "-1m", "1h30m"}) {
    const auto settings = settingsFromConfigMap(Json{{"data", {{"kv-cache-unused-after", value}}}});
    ASSERT_FALSE(settings.ok()) << value;
    EXPECT_NE(settings.status().message().find("Setting kv-cache-unused-after is \"" +
                                               std::string(value) + "\"; set it to"),
              std::string::npos)
        << settings.status().message();
  }
}

TEST(Settings, TheLeaderLeaseIsWholeSecondsFromTwoToSixty) {
  for (const auto& [value, seconds] :
       {std::pair{"2s", 2}, std::pair{"15s", 15}, std::pair{"60s", 60}}) {
    const auto settings =
        settingsFromConfigMap(Json{{"data", {{"kv-cache-leader-lease-duration", value}}}});
    ASSERT_TRUE(settings.ok()) << value;
    EXPECT_EQ(settings->settings.leader_lease, std::chrono::seconds(seconds));
  }
  for (const char* value : {"1s", "61s", "4", "4.5s", "500ms", "s", "", "-4s", "0004s"}) {
    const auto settings =
        settingsFromConfigMap(Json{{"data", {{"kv-cache-leader-lease-duration", value}}}});
    ASSERT_FALSE(settings.ok()) << value;
    EXPECT_NE(settings.status().message().find("Setting kv-cache-leader-lease-duration is \"" +
                                               std::string(value) +
                                               "\"; set it to whole seconds from 2s to 60s"),
              std::string::npos)
        << settings.status().message();
  }
}

}  // namespace
}  // namespace kvc::api
