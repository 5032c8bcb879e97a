// The status writer: through the status subresource, under the one field manager, only when
// something differs, with the resourceVersion it read, and re-reading the cache on a conflict.
#include "kvc/runtime/status_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "fake_apiserver.h"
#include "kvc/kube/resource.h"
#include "matchers.h"

namespace kvc::runtime {
namespace {

using kvc::testing::FakeApiServer;
using kvc::testing::FakeRequest;
using kvc::testing::ResponseWriter;
using kvc::testing::StatusIs;

Json pool(const std::string& version, const Json& status) {
  return Json{{"apiVersion", "worker.gpustack.ai/v1"},
              {"kind", "KVCachePool"},
              {"metadata", {{"name", "p"}, {"generation", 3}, {"resourceVersion", version}}},
              {"spec", {{"backends", {"b"}}}},
              {"status", status}};
}

class StatusWriterTest : public ::testing::Test {
protected:
  StatusWriterTest()
      : client_(*kube::Client::create(server_.config())),
        writer_(client_, kube::resources::kvCachePools(), &registry_) {}

  FakeApiServer server_;
  kube::ClientPtr client_;
  Registry registry_;
  StatusWriter writer_;
};

TEST_F(StatusWriterTest, NothingIsSentWhenTheStatusIsUnchanged) {
  server_.setHandler([](const FakeRequest&, ResponseWriter& out) { out.respond(500, "{}"); });
  // The same status in another key order, observedGeneration already at the generation.
  const Json current =
      pool("7", Json::parse(R"({"phase":"Ready","observedGeneration":3,"clientEndpoint":"a:1"})"));
  auto written = writer_.write(current, Json::parse(R"({"clientEndpoint":"a:1","phase":"Ready"})"));
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(written->outcome, StatusWriteOutcome::Unchanged);
  EXPECT_EQ(server_.requestCount(), 0U);
  EXPECT_NE(registry_.render().find(
                R"(kvcache_status_writes_total{resource="kvcachepools",outcome="unchanged"} 1)"),
            std::string::npos);
}

TEST_F(StatusWriterTest, AChangeIsPutThroughTheStatusSubresourceWithTheVersionRead) {
  server_.setHandler([](const FakeRequest& r, ResponseWriter& out) { out.respond(200, r.body); });
  const Json current = pool("7", Json::parse(R"({"phase":"Provisioning","observedGeneration":2})"));
  auto written = writer_.write(current, Json::parse(R"({"phase":"Ready"})"));
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(written->outcome, StatusWriteOutcome::Written);
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0].method, "PUT");
  EXPECT_EQ(requests[0].path, "/apis/worker.gpustack.ai/v1/kvcachepools/p/status");
  EXPECT_EQ(requests[0].param("fieldManager"), "kvcache-operator");
  const Json body = Json::parse(requests[0].body);
  EXPECT_EQ(body["metadata"]["resourceVersion"], "7");
  // The whole status, stamped with the generation this pass evaluated.
  EXPECT_EQ(body["status"], Json::parse(R"({"phase":"Ready","observedGeneration":3})"));
}

TEST_F(StatusWriterTest, AConflictIsAbortedAndWritesNothing) {
  server_.setHandler(kvc::testing::answerStatus(409, "Conflict", "the object has been modified"));
  auto written = writer_.write(pool("7", Json::object()), Json::parse(R"({"phase":"Ready"})"));
  EXPECT_THAT(written.status(), StatusIs(StatusCode::Aborted));
}

TEST_F(StatusWriterTest, UpdateRereadsTheCacheAfterAConflictAndKeepsTheOtherWritersPart) {
  // Another controller wrote usedBy after our read: our first PUT loses, the cache catches up,
  // and the second attempt computes from the fresh object, keeping usedBy.
  Store cache;
  const Json stale = pool("7", Json::parse(R"({"phase":"Provisioning"})"));
  cache.upsert("p", stale, packObject(stale));
  std::atomic<int> puts{0};
  server_.setHandler([&](const FakeRequest& r, ResponseWriter& out) {
    if (puts++ == 0) {
      const Json fresh =
          pool("8", Json::parse(R"({"phase":"Provisioning","usedBy":[{"kind":"KVCachePool",
              "namespace":"","name":"other"}]})"));
      cache.upsert("p", fresh, packObject(fresh));
      out.respond(409, kvc::testing::statusBody(409, "Conflict", "modified"));
      return;
    }
    out.respond(200, r.body);
  });
  std::atomic<int> computed{0};
  auto written = writer_.update(cache, "p", [&](const Json& current) -> Result<Json> {
    ++computed;
    Json status = current["status"];
    status["phase"] = "Ready";
    return status;
  });
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(written->outcome, StatusWriteOutcome::Written);
  EXPECT_EQ(computed.load(), 2);
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2U);
  const Json second = Json::parse(requests[1].body);
  EXPECT_EQ(second["metadata"]["resourceVersion"], "8");
  EXPECT_EQ(second["status"]["usedBy"][0]["name"], "other");
  EXPECT_NE(registry_.render().find(R"(outcome="conflict"} 1)"), std::string::npos);
}

TEST_F(StatusWriterTest, ADeletedObjectIsGone) {
  server_.setHandler(kvc::testing::answerStatus(404, "NotFound", "not found"));
  auto written = writer_.write(pool("7", Json::object()), Json::parse(R"({"phase":"Ready"})"));
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->outcome, StatusWriteOutcome::Gone);
}

TEST(SameJsonTest, KeyOrderDoesNotMatterButValuesDo) {
  EXPECT_TRUE(sameJson(Json::parse(R"({"a":1,"b":{"c":[1,2]}})"),
                       Json::parse(R"({"b":{"c":[1,2]},"a":1})")));
  EXPECT_FALSE(sameJson(Json::parse(R"({"b":{"c":[2,1]}})"), Json::parse(R"({"b":{"c":[1,2]}})")));
  EXPECT_FALSE(sameJson(Json::parse(R"({"usage":"0"})"), Json::parse(R"({})")));  // 0 is not absent
}

}  // namespace
}  // namespace kvc::runtime
