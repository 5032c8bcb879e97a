// The injection webhook's view of the cluster, and the namespace labels ModelDeployment admission
// reads, against the in-process fake API server: the caches first, live on a miss (or without
// caches) within the view's timeout; a live NotFound is "does not exist", any other failure and
// an object that does not decode are errors, never "absent".
#include "kvc/webhook/live_cluster_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fake_apiserver.h"
#include "gate.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/store.h"
#include "matchers.h"

namespace kvc::webhook {
namespace {

using kvc::testing::FakeApiServer;
using kvc::testing::FakeRequest;
using kvc::testing::IsOk;
using kvc::testing::ResponseWriter;
using kvc::testing::StatusIs;
using ::testing::HasSubstr;

constexpr std::string_view kBindingPath =
    "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings/team-a";
constexpr std::string_view kPoolPath = "/apis/worker.gpustack.ai/v1/kvcachepools/shared-dram";
constexpr std::string_view kBackendPath =
    "/apis/worker.gpustack.ai/v1/kvcachebackends/mooncake-dram";

Json binding() {
  return Json::parse(R"({"apiVersion": "worker.gpustack.ai/v1",
    "kind": "KVCachePoolBinding", "metadata": {"name": "team-a", "namespace": "team-a"},
    "spec": {"poolRef": {"name": "shared-dram"}, "quota": {"ceiling": "8Gi"},
             "domain": {"blockSize": 64, "dtype": "bfloat16"}}})");
}

Json pool() {
  return Json::parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "KVCachePool",
    "metadata": {"name": "shared-dram"},
    "spec": {"backends": ["mooncake-dram"], "quota": {"total": "16Gi"}}})");
}

Json backend() {
  return Json::parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "KVCacheBackend",
    "metadata": {"name": "mooncake-dram"},
    "spec": {"connection": {"managed": {"leader": {},
      "members": [{"nodeSelector": {"kubernetes.io/os": "linux"}, "medium": "DRAM",
                   "capacityPerMember": "8Gi"}]}}}})");
}

void put(runtime::Store& store, const Json& object) {
  store.upsert(kube::object::key(object), object, runtime::packObject(object));
}

using kvc::testing::Gate;

class LiveClusterViewTest : public ::testing::Test {
protected:
  LiveClusterViewTest() {
    kube::Config config = server_.config();
    config.timeout = std::chrono::seconds(60);  // only the view's own timeout ends a read soon
    client_ = *kube::Client::create(config);
  }
  ~LiveClusterViewTest() override { gate_.open(); }

  // The server answers GETs of a path it holds with its object, everything else 404.
  void serve(std::map<std::string, Json> objects) {
    server_.setHandler(kvc::testing::serveObjects(std::move(objects)));
  }
  void answerStatus(int code, std::string_view reason, std::string_view message) {
    server_.setHandler(kvc::testing::answerStatus(code, reason, message));
  }

  LiveClusterView cached() const {
    return LiveClusterView(client_, &bindings_, &pools_, &backends_,
                           std::chrono::milliseconds(200));
  }
  LiveClusterView uncached() const {
    return LiveClusterView(client_, nullptr, nullptr, nullptr, std::chrono::milliseconds(200));
  }

  Gate gate_;  // outlives the server's connection threads
  FakeApiServer server_;
  kube::ClientPtr client_;
  runtime::Store bindings_;
  runtime::Store pools_;
  runtime::Store backends_;
};

TEST_F(LiveClusterViewTest, CachedObjectsAreReadWithoutARequest) {
  answerStatus(500, "InternalError", "must not be asked");
  put(bindings_, binding());
  put(pools_, pool());
  put(backends_, backend());
  const LiveClusterView view = cached();
  auto b = view.binding("team-a", "team-a");
  auto p = view.pool("shared-dram");
  auto k = view.backend("mooncake-dram");
  ASSERT_THAT(b, IsOk());
  ASSERT_THAT(p, IsOk());
  ASSERT_THAT(k, IsOk());
  ASSERT_TRUE(b->has_value());
  ASSERT_TRUE(p->has_value());
  ASSERT_TRUE(k->has_value());
  EXPECT_EQ((*b)->spec.pool_ref, "shared-dram");
  EXPECT_EQ((*p)->spec.backends, std::vector<std::string>{"mooncake-dram"});
  EXPECT_EQ((*k)->metadata.name, "mooncake-dram");
  EXPECT_EQ(server_.requestCount(), 0U);
}

TEST_F(LiveClusterViewTest, ACacheMissIsReadLiveInTheObjectsNamespace) {
  serve({{std::string(kBindingPath), binding()},
         {std::string(kPoolPath), pool()},
         {std::string(kBackendPath), backend()}});
  const LiveClusterView view = cached();
  auto b = view.binding("team-a", "team-a");
  auto p = view.pool("shared-dram");
  auto k = view.backend("mooncake-dram");
  ASSERT_THAT(b, IsOk());
  ASSERT_THAT(p, IsOk());
  ASSERT_THAT(k, IsOk());
  EXPECT_TRUE(b->has_value());
  EXPECT_TRUE(p->has_value());
  EXPECT_TRUE(k->has_value());
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 3U);
  EXPECT_EQ(requests[0].path, kBindingPath);
  EXPECT_EQ(requests[1].path, kPoolPath);
  EXPECT_EQ(requests[2].path, kBackendPath);
}

TEST_F(LiveClusterViewTest, WithoutCachesEveryReadIsLive) {
  serve({{std::string(kBindingPath), binding()}});
  const LiveClusterView view = uncached();
  EXPECT_THAT(view.binding("team-a", "team-a"), IsOk());
  EXPECT_THAT(view.binding("team-a", "team-a"), IsOk());
  EXPECT_EQ(server_.requestCount(), 2U);
}

TEST_F(LiveClusterViewTest, OnlyALiveNotFoundIsAbsent) {
  serve({});
  const LiveClusterView view = cached();
  auto b = view.binding("team-a", "team-a");
  auto p = view.pool("shared-dram");
  auto k = view.backend("mooncake-dram");
  ASSERT_THAT(b, IsOk());
  ASSERT_THAT(p, IsOk());
  ASSERT_THAT(k, IsOk());
  EXPECT_FALSE(b->has_value());
  EXPECT_FALSE(p->has_value());
  EXPECT_FALSE(k->has_value());
}

TEST_F(LiveClusterViewTest, AFailedReadIsAnErrorNotAbsent) {
  answerStatus(500, "InternalError", "etcd is down");
  const LiveClusterView view = cached();
  EXPECT_THAT(view.binding("team-a", "team-a"),
              StatusIs(StatusCode::Unavailable, "InternalError (HTTP 500): etcd is down"));
  EXPECT_THAT(view.pool("shared-dram"), StatusIs(StatusCode::Unavailable));
  answerStatus(403, "Forbidden", "cannot get kvcachebackends");
  EXPECT_THAT(
      view.backend("mooncake-dram"),
      StatusIs(StatusCode::PermissionDenied, "Forbidden (HTTP 403): cannot get kvcachebackends"));
}

TEST_F(LiveClusterViewTest, AnObjectThatDoesNotDecodeIsAnErrorNotAbsent) {
  Json broken = pool();
  broken["spec"]["backends"] = Json::array({7});
  put(pools_, broken);
  const LiveClusterView view = cached();
  auto from_cache = view.pool("shared-dram");
  EXPECT_THAT(from_cache,
              StatusIs(StatusCode::InvalidArgument, "spec.backends[0] must be a string"));
  EXPECT_EQ(server_.requestCount(), 0U);
  serve({{std::string(kPoolPath), broken}});
  auto live = uncached().pool("shared-dram");
  EXPECT_THAT(live, StatusIs(StatusCode::InvalidArgument, "spec.backends[0] must be a string"));
  EXPECT_EQ(server_.requestCount(), 1U);
}

TEST_F(LiveClusterViewTest, ALiveReadEndsAtTheViewsTimeout) {
  server_.setHandler([this](const FakeRequest&, ResponseWriter& out) {
    gate_.wait();
    out.respond(200, binding().dump());
  });
  const auto start = std::chrono::steady_clock::now();
  auto read = cached().binding("team-a", "team-a");
  const auto took = std::chrono::steady_clock::now() - start;
  gate_.open();
  // The rest of the message is libcurl's wording.
  EXPECT_THAT(read, StatusIs(StatusCode::DeadlineExceeded,
                             HasSubstr("Deadline: GET " + std::string(kBindingPath) + ": ")));
  EXPECT_LT(took, std::chrono::seconds(5));
}

// --- namespace labels (ModelDeployment admission's Pod Security level) ------------------------

constexpr std::string_view kNamespacePath = "/api/v1/namespaces/team-a";

Json teamA() {
  return Json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
    "metadata": {"name": "team-a", "labels": {"pod-security.kubernetes.io/enforce": "baseline"}}})");
}

TEST_F(LiveClusterViewTest, NamespaceLabelsComeFromTheCacheElseLive) {
  answerStatus(500, "InternalError", "must not be asked");
  runtime::Store namespaces;
  put(namespaces, teamA());
  const LiveNamespaceLabels cached_labels(client_, &namespaces, std::chrono::milliseconds(200));
  auto labels = cached_labels.labels("team-a");
  ASSERT_THAT(labels, IsOk());
  ASSERT_TRUE(labels->has_value());
  EXPECT_EQ((*labels)->at("pod-security.kubernetes.io/enforce"), "baseline");
  EXPECT_EQ(server_.requestCount(), 0U);

  serve({{std::string(kNamespacePath), teamA()}});
  const LiveNamespaceLabels live(client_, nullptr, std::chrono::milliseconds(200));
  labels = live.labels("team-a");
  ASSERT_THAT(labels, IsOk());
  ASSERT_TRUE(labels->has_value());
  EXPECT_EQ((*labels)->size(), 1U);
  ASSERT_EQ(server_.requests().size(), 1U);
  EXPECT_EQ(server_.requests()[0].path, kNamespacePath);

  // A namespace without labels has none; only a live NotFound is "does not exist".
  serve({{std::string(kNamespacePath), Json::parse(R"({"metadata": {"name": "team-a"}})")}});
  labels = live.labels("team-a");
  ASSERT_THAT(labels, IsOk());
  ASSERT_TRUE(labels->has_value());
  EXPECT_TRUE((*labels)->empty());
  serve({});
  labels = cached_labels.labels("team-b");
  ASSERT_THAT(labels, IsOk());
  EXPECT_FALSE(labels->has_value());
}

TEST_F(LiveClusterViewTest, AFailedNamespaceReadIsAnErrorNotNoLabels) {
  answerStatus(403, "Forbidden", "cannot get namespaces");
  const LiveNamespaceLabels labels(client_, nullptr, std::chrono::milliseconds(200));
  EXPECT_THAT(labels.labels("team-a"), StatusIs(StatusCode::PermissionDenied,
                                                "Forbidden (HTTP 403): cannot get namespaces"));
}

}  // namespace
}  // namespace kvc::webhook
