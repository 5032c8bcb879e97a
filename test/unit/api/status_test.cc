// The statuses the controllers write, encoded as the contract says: "absent is not zero" — a
// figure that was not observed is left out, one observed to be zero is written as 0 — and
// decoded back to the same values.
#include <gtest/gtest.h>

#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/pool.h"

namespace kvc::api {
namespace {

Json withStatus(Json object, const Json& status) {
  object["status"] = status;
  return object;
}

const Json kBackend = Json::parse(R"({"apiVersion":"worker.gpustack.ai/v1","kind":"KVCacheBackend",
    "metadata":{"name":"ext"},"spec":{"connection":{"external":{"endpoints":[
    {"name":"Client","address":"10.0.0.1:50051"},{"name":"Admin","address":"10.0.0.1:9003"}]}}}})");
const Json kPool = Json::parse(R"({"apiVersion":"worker.gpustack.ai/v1","kind":"KVCachePool",
    "metadata":{"name":"shared-dram"},"spec":{"backends":["ext"],"quota":{"total":"16Gi"}}})");
const Json kBinding = Json::parse(R"({"apiVersion":"worker.gpustack.ai/v1",
    "kind":"KVCachePoolBinding","metadata":{"name":"team-a","namespace":"team-a"},
    "spec":{"poolRef":{"name":"shared-dram"},"quota":{"ceiling":"8Gi"},
    "domain":{"blockSize":64,"dtype":"bfloat16"}}})");

TEST(BackendStatusTest, CapacityIsAbsentUntilObserved) {
  KVCacheBackend::Status status;
  status.phase = "Provisioning";
  status.phase_message = "waiting";
  EXPECT_EQ(backendStatusToJson(status),
            Json::parse(R"({"phase":"Provisioning","phaseMessage":"waiting"})"));
  status.capacity_total = 0;  // observed to be zero: written
  const Json written = backendStatusToJson(status);
  EXPECT_EQ(written["capacity"], Json::parse(R"({"total":"0"})"));
  EXPECT_FALSE(written["capacity"].contains("used"));
}

TEST(BackendStatusTest, RoundTrips) {
  KVCacheBackend::Status status;
  status.observed_generation = 2;
  status.phase = "Ready";
  status.endpoints = {{"Client", "10.0.0.1:50051"}, {"Admin", "10.0.0.1:9003"}};
  status.capacity_total = std::int64_t{16} << 30;
  status.capacity_used = 1536;
  status.members = {{"1-2", "3-4", "10.0.0.5:12345", "", "", "tcp", "OK"}};
  status.used_by = {{"KVCachePool", "", "shared-dram"}};
  const Json json = backendStatusToJson(status);
  EXPECT_EQ(json["capacity"], Json::parse(R"({"total":"16Gi","used":"1536"})"));
  EXPECT_EQ(json["members"][0], Json::parse(R"({"segmentID":"1-2","clientID":"3-4",
      "segmentName":"10.0.0.5:12345","protocol":"tcp","state":"OK"})"));
  auto decoded = backendFromJson(withStatus(kBackend, json));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(backendStatusToJson(decoded->status), json);
  EXPECT_EQ(decoded->status.capacity_total, status.capacity_total);
  EXPECT_EQ(endpointAddress(decoded->status.endpoints, kEndpointAdmin), "10.0.0.1:9003");
}

TEST(PoolStatusTest, UsageIsAbsentUntilObserved) {
  KVCachePool::Status status;
  status.phase = "Ready";
  status.client_endpoint = "10.0.0.1:50051";
  Json json = poolStatusToJson(status);
  EXPECT_FALSE(json.contains("usage"));
  EXPECT_FALSE(json.contains("domains"));
  status.usage_total = 0;
  json = poolStatusToJson(status);
  EXPECT_EQ(json["usage"], Json::parse(R"({"total":"0"})"));
}

TEST(PoolStatusTest, RoundTrips) {
  KVCachePool::Status status;
  status.observed_generation = 1;
  status.phase = "Ready";
  status.client_endpoint = "10.0.0.1:50051";
  status.usage_total = std::int64_t{3} << 20;
  status.domains = {
      {"team-a-chat", "team-a", "team-a", 64, "bfloat16", std::nullopt, std::nullopt}};
  status.used_by = {{"KVCachePoolBinding", "team-a", "team-a"}};
  const Json json = poolStatusToJson(status);
  EXPECT_EQ(json["domains"][0], Json::parse(R"({"name":"team-a-chat",
      "binding":{"namespace":"team-a","name":"team-a"},"blockSize":64,"dtype":"bfloat16"})"));
  auto decoded = poolFromJson(withStatus(kPool, json));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(poolStatusToJson(decoded->status), json);
}

TEST(BindingStatusTest, FiguresAreAbsentUntilObservedAndZeroIsWritten) {
  KVCachePoolBinding::Status status;
  status.phase = "Provisioning";
  status.phase_message = "QuotaGranted has not been observed yet";
  Json json = bindingStatusToJson(status);
  for (const char* figure :
       {"requestedQuota", "effectiveQuota", "usage", "overQuota", "blocks", "hitRate"}) {
    EXPECT_FALSE(json.contains(figure)) << figure;
  }
  status.effective_quota = 0;  // the master granted nothing: that is an answer
  status.over_quota = false;
  json = bindingStatusToJson(status);
  EXPECT_EQ(json["effectiveQuota"], "0");
  EXPECT_EQ(json["overQuota"], false);
  EXPECT_FALSE(json.contains("usage"));
}

TEST(BindingStatusTest, RoundTrips) {
  KVCachePoolBinding::Status status;
  status.observed_generation = 1;
  status.phase = "Ready";
  status.requested_quota = std::int64_t{8} << 30;
  status.effective_quota = 6871947673;  // a proportional recut: exact bytes
  status.usage = 0;
  status.over_quota = false;
  status.used_by = {{"ModelDeployment", "", "qwen-chat"}};
  const Json json = bindingStatusToJson(status);
  EXPECT_EQ(json["requestedQuota"], "8Gi");
  EXPECT_EQ(json["effectiveQuota"], "6871947673");
  auto decoded = bindingFromJson(withStatus(kBinding, json));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(bindingStatusToJson(decoded->status), json);
  EXPECT_EQ(decoded->spec.domain.name, "default");  // the API server's default
}

TEST(BindingStatusTest, AFigureThatIsNotAQuantityIsRefusedWithItsPath) {
  auto decoded = bindingFromJson(withStatus(kBinding, Json::parse(R"({"usage":"lots"})")));
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("status.usage"), std::string::npos);
}

TEST(ObjectMetaTest, CarriesFinalizersOwnersAndTheDeletionTime) {
  auto meta = objectMetaFromJson(Json::parse(R"({"name":"x","namespace":"n","generation":3,
      "deletionTimestamp":"2026-12-01T10:00:00Z","finalizers":["a/b"],
      "ownerReferences":[{"apiVersion":"worker.gpustack.ai/v1","kind":"KVCacheBackend",
      "name":"b","uid":"u","controller":true,"blockOwnerDeletion":true}]})"),
                                 "metadata");
  ASSERT_TRUE(meta.ok()) << meta.status().message();
  EXPECT_TRUE(meta->deleting);
  EXPECT_EQ(meta->deletion_timestamp, "2026-12-01T10:00:00Z");
  EXPECT_TRUE(hasFinalizer(*meta, "a/b"));
  ASSERT_EQ(meta->owner_references.size(), 1U);
  EXPECT_EQ(meta->owner_references[0],
            (OwnerReference{"worker.gpustack.ai/v1", "KVCacheBackend", "b", "u", true, true}));
  auto bad = objectMetaFromJson(Json::parse(R"({"name":"x","finalizers":[3]})"), "metadata");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "metadata.finalizers[0] must be a string");
}

}  // namespace
}  // namespace kvc::api
