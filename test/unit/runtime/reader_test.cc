// The cached-or-live reader against the in-process fake API server: a cached object costs no
// request, a miss (or no cache) reads live, only a live NotFound is "absent", every other failure
// and an object that does not decode are errors, and the reader's timeout bounds the live read.
#include "kvc/runtime/reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "fake_apiserver.h"
#include "gate.h"
#include "kvc/api/pool.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "matchers.h"

namespace kvc::runtime {
namespace {

using kvc::testing::FakeApiServer;
using kvc::testing::FakeRequest;
using kvc::testing::HasValue;
using kvc::testing::IsOk;
using kvc::testing::ResponseWriter;
using kvc::testing::StatusIs;
using ::testing::HasSubstr;

constexpr std::string_view kPoolPath = "/apis/worker.gpustack.ai/v1/kvcachepools/p";

Json pool(const std::string& backend) {
  return Json{{"apiVersion", "worker.gpustack.ai/v1"},
              {"kind", "KVCachePool"},
              {"metadata", {{"name", "p"}, {"resourceVersion", "7"}}},
              {"spec", {{"backends", {backend}}}}};
}

void put(Store& store, const Json& object) {
  store.upsert(kube::object::key(object), object, packObject(object));
}

using kvc::testing::Gate;

class CachedReaderTest : public ::testing::Test {
protected:
  CachedReaderTest() : client_(*kube::Client::create(server_.config())) {}
  // A handler held at the gate lets go before the server joins its thread.
  ~CachedReaderTest() override { gate_.open(); }

  // The server answers every request with `status` and `body`.
  void answer(int status, std::string body) {
    server_.setHandler(kvc::testing::answerWith(status, std::move(body)));
  }
  void answerStatus(int code, std::string_view reason, std::string_view message) {
    server_.setHandler(kvc::testing::answerStatus(code, reason, message));
  }

  // The server answers only once the test opens the gate.
  void holdAnswers() {
    server_.setHandler([this](const FakeRequest&, ResponseWriter& out) {
      gate_.wait();
      out.respond(200, pool("late").dump());
    });
  }

  Gate gate_;  // outlives the server's connection threads
  FakeApiServer server_;
  kube::ClientPtr client_;
  Store store_;
};

TEST_F(CachedReaderTest, ACachedObjectIsReadWithoutARequest) {
  answerStatus(500, "InternalError", "must not be asked");
  put(store_, pool("cached"));
  CachedReader pools(client_, kube::resources::kvCachePools(), &store_);
  auto read = pools.get("", "p");
  ASSERT_THAT(read, IsOk());
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((***read)["spec"]["backends"][0], "cached");
  EXPECT_THAT(pools.exists("", "p"), HasValue(true));
  EXPECT_EQ(server_.requestCount(), 0U);
}

TEST_F(CachedReaderTest, ACacheMissIsReadLive) {
  answer(200, pool("live").dump());
  CachedReader pools(client_, kube::resources::kvCachePools(), &store_);
  auto read = pools.get("", "p");
  ASSERT_THAT(read, IsOk());
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((***read)["spec"]["backends"][0], "live");
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].path, kPoolPath);
}

TEST_F(CachedReaderTest, ANamespacedObjectIsKeyedAndReadInItsNamespace) {
  answer(200, Json{{"metadata", {{"name", "b"}, {"namespace", "team-b"}}}}.dump());
  put(store_, Json{{"metadata", {{"name", "b"}, {"namespace", "team-a"}}}});
  CachedReader bindings(client_, kube::resources::kvCachePoolBindings(), &store_);
  // Cached under "team-a/b": no request.
  EXPECT_THAT(bindings.exists("team-a", "b"), HasValue(true));
  EXPECT_EQ(server_.requestCount(), 0U);
  // Not cached in team-b: read live there.
  EXPECT_THAT(bindings.exists("team-b", "b"), HasValue(true));
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0].path,
            "/apis/worker.gpustack.ai/v1/namespaces/team-b/kvcachepoolbindings/b");
}

TEST_F(CachedReaderTest, WithoutACacheEveryReadIsLive) {
  answer(200, pool("live").dump());
  CachedReader pools(client_, kube::resources::kvCachePools(), nullptr);
  EXPECT_THAT(pools.exists("", "p"), HasValue(true));
  EXPECT_THAT(pools.exists("", "p"), HasValue(true));
  EXPECT_EQ(server_.requestCount(), 2U);
}

TEST_F(CachedReaderTest, OnlyALiveNotFoundIsAbsent) {
  answerStatus(404, "NotFound", "kvcachepools.worker.gpustack.ai \"p\" not found");
  CachedReader pools(client_, kube::resources::kvCachePools(), &store_);
  auto read = pools.get("", "p");
  ASSERT_THAT(read, IsOk());
  EXPECT_FALSE(read->has_value());
  EXPECT_THAT(pools.exists("", "p"), HasValue(false));
  auto typed = pools.getAs("", "p", &api::poolFromJson);
  ASSERT_THAT(typed, IsOk());
  EXPECT_FALSE(typed->has_value());
  EXPECT_EQ(server_.requestCount(), 3U);
}

TEST_F(CachedReaderTest, AServerErrorIsAnErrorNotAbsent) {
  answerStatus(500, "InternalError", "etcd is down");
  CachedReader pools(client_, kube::resources::kvCachePools(), &store_);
  EXPECT_THAT(pools.get("", "p"), StatusIs(StatusCode::Unavailable, HasSubstr("etcd is down")));
  EXPECT_THAT(pools.exists("", "p"), StatusIs(StatusCode::Unavailable));
  EXPECT_THAT(pools.getAs("", "p", &api::poolFromJson), StatusIs(StatusCode::Unavailable));
}

TEST_F(CachedReaderTest, AForbiddenReadIsAnErrorNotAbsent) {
  answerStatus(403, "Forbidden", "cannot get resource \"kvcachepools\"");
  CachedReader pools(client_, kube::resources::kvCachePools(), &store_);
  EXPECT_THAT(pools.get("", "p"),
              StatusIs(StatusCode::PermissionDenied, HasSubstr("cannot get resource")));
  EXPECT_THAT(pools.exists("", "p"), StatusIs(StatusCode::PermissionDenied));
}

TEST_F(CachedReaderTest, AnObjectThatDoesNotDecodeIsAnErrorNotAbsent) {
  Json broken = pool("b");
  broken["spec"]["backends"] = Json::array({7});
  // Cached.
  put(store_, broken);
  CachedReader cached(client_, kube::resources::kvCachePools(), &store_);
  EXPECT_THAT(cached.getAs("", "p", &api::poolFromJson),
              StatusIs(StatusCode::InvalidArgument, HasSubstr("spec.backends[0]")));
  EXPECT_EQ(server_.requestCount(), 0U);
  // Live.
  answer(200, broken.dump());
  CachedReader live(client_, kube::resources::kvCachePools(), nullptr);
  EXPECT_THAT(live.getAs("", "p", &api::poolFromJson),
              StatusIs(StatusCode::InvalidArgument, HasSubstr("spec.backends[0]")));
  EXPECT_EQ(server_.requestCount(), 1U);
}

TEST_F(CachedReaderTest, ADecodedObjectComesBackTyped) {
  answer(200, pool("live").dump());
  put(store_, pool("cached"));
  CachedReader cached(client_, kube::resources::kvCachePools(), &store_);
  CachedReader live(client_, kube::resources::kvCachePools(), nullptr);
  auto from_cache = cached.getAs("", "p", &api::poolFromJson);
  auto from_server = live.getAs("", "p", &api::poolFromJson);
  ASSERT_THAT(from_cache, IsOk());
  ASSERT_THAT(from_server, IsOk());
  ASSERT_TRUE(from_cache->has_value());
  ASSERT_TRUE(from_server->has_value());
  EXPECT_EQ((*from_cache)->spec.backends, std::vector<std::string>{"cached"});
  EXPECT_EQ((*from_server)->spec.backends, std::vector<std::string>{"live"});
}

TEST_F(CachedReaderTest, TheTimeoutBoundsTheLiveRead) {
  // The client's own deadline is far away: only the reader's can end the read this soon.
  kube::Config config = server_.config();
  config.timeout = std::chrono::seconds(60);
  kube::ClientPtr patient = *kube::Client::create(config);
  holdAnswers();
  CachedReader pools(patient, kube::resources::kvCachePools(), &store_,
                     std::chrono::milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  auto read = pools.get("", "p");
  const auto took = std::chrono::steady_clock::now() - start;
  gate_.open();
  EXPECT_THAT(read, StatusIs(StatusCode::DeadlineExceeded));
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST_F(CachedReaderTest, WithoutATimeoutTheClientsDeadlineApplies) {
  kube::Config config = server_.config();
  config.timeout = std::chrono::milliseconds(200);
  kube::ClientPtr hasty = *kube::Client::create(config);
  holdAnswers();
  CachedReader pools(hasty, kube::resources::kvCachePools(), &store_);
  auto read = pools.get("", "p");
  gate_.open();
  EXPECT_THAT(read, StatusIs(StatusCode::DeadlineExceeded));
}

}  // namespace
}  // namespace kvc::runtime
