// The client over its real libcurl transport against the in-process fake API server: headers,
// bodies, typed errors, pagination, chunked watch streams, cancellation and deadlines.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "fake_apiserver.h"
#include "gate.h"
#include "kvc/kube/client.h"
#include "kvc/kube/discovery.h"
#include "kvc/kube/object.h"

namespace kvc::kube {
namespace {

using testing::FakeApiServer;
using testing::FakeRequest;
using testing::FakeResourceServer;
using testing::ResponseWriter;

ClientPtr clientFor(const FakeApiServer& server, std::string token = {}) {
  auto client = Client::create(server.config(std::move(token)));
  EXPECT_TRUE(client.ok()) << client.status().toString();
  return *client;
}

TEST(TransportTest, GetSendsAcceptAndBearerAndDecodesTheObject) {
  FakeApiServer server;
  server.setHandler([](const FakeRequest& r, ResponseWriter& out) {
    out.respond(
        200, Json{{"kind", "KVCachePool"}, {"metadata", {{"name", "p"}}}, {"path", r.path}}.dump());
  });
  Api pools(clientFor(server, "tok"), resources::kvCachePools());
  auto pool = pools.get("p");
  ASSERT_TRUE(pool.ok()) << pool.status().toString();
  EXPECT_EQ((*pool)["path"], "/apis/worker.gpustack.ai/v1/kvcachepools/p");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0].headers.at("accept"), "application/json");
  EXPECT_EQ(requests[0].headers.at("authorization"), "Bearer tok");
  EXPECT_EQ(requests[0].headers.at("user-agent"), "kvcache-operator/0.1.0");
}

TEST(TransportTest, ApplySendsItsContentTypeAndBody) {
  FakeApiServer server;
  server.setHandler([](const FakeRequest& r, ResponseWriter& out) { out.respond(200, r.body); });
  Api bindings(clientFor(server), resources::kvCachePoolBindings(), "team-a");
  const Json intent = {{"apiVersion", "worker.gpustack.ai/v1"},
                       {"kind", "KVCachePoolBinding"},
                       {"metadata", {{"name", "b"}, {"namespace", "team-a"}}},
                       {"status", {{"observedGeneration", 4}}}};
  auto applied = bindings.applyStatus(intent, "mgr", /*force=*/true);
  ASSERT_TRUE(applied.ok()) << applied.status().toString();
  EXPECT_EQ(*applied, intent);
  const FakeRequest r = server.requests().at(0);
  EXPECT_EQ(r.method, "PATCH");
  EXPECT_EQ(r.path, "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings/b/status");
  EXPECT_EQ(r.param("fieldManager"), "mgr");
  EXPECT_EQ(r.param("force"), "true");
  EXPECT_EQ(r.headers.at("content-type"), "application/apply-patch+yaml");
}

TEST(TransportTest, DeleteSendsItsOptionsInTheBody) {
  FakeApiServer server;
  server.setHandler([](const FakeRequest& r, ResponseWriter& out) {
    out.respond(200, testing::statusBody(200, "", r.body));
  });
  Api pods(clientFor(server), resources::pods(), "a");
  DeleteParams p;
  p.propagation_policy = "Background";
  ASSERT_TRUE(pods.remove("x", p).ok());
  const FakeRequest r = server.requests().at(0);
  EXPECT_EQ(r.method, "DELETE");
  EXPECT_EQ(Json::parse(r.body)["propagationPolicy"], "Background");
}

TEST(TransportTest, ErrorAnswersBecomeTypedErrors) {
  FakeApiServer server;
  server.setHandler([](const FakeRequest& r, ResponseWriter& out) {
    if (r.path.ends_with("/conflict")) {
      out.respond(409, testing::statusBody(409, "Conflict", "the object has been modified"));
    } else if (r.path.ends_with("/busy")) {
      out.respond(429, testing::statusBody(429, "TooManyRequests", "slow down"), "application/json",
                  {"Retry-After: 4"});
    } else {
      out.respond(404, testing::statusBody(404, "NotFound", "not here"));
    }
  });
  Api cms(clientFor(server), resources::configMaps(), "a");
  auto conflict = cms.get("conflict");
  ASSERT_FALSE(conflict.ok());
  EXPECT_TRUE(conflict.error().isConflict());
  EXPECT_EQ(conflict.status().code(), StatusCode::Aborted);
  auto busy = cms.get("busy");
  ASSERT_FALSE(busy.ok());
  EXPECT_TRUE(busy.error().isTooManyRequests());
  ASSERT_TRUE(busy.error().retryAfter().has_value());
  EXPECT_EQ(busy.error().retryAfter()->count(), 4);
  auto missing = cms.getOptional("missing");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST(TransportTest, AnUnreachableServerIsATransportError) {
  int port = 0;
  {
    FakeApiServer server;  // take a free port, then free it
    port = server.port();
  }
  Config config;
  config.server = "http://127.0.0.1:" + std::to_string(port);
  auto client = Client::create(config);
  ASSERT_TRUE(client.ok());
  auto answer = Api(*client, resources::pods(), "a").get("p");
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().reason(), ErrorReason::Transport);
  EXPECT_EQ(answer.status().code(), StatusCode::Unavailable);
}

// A handler that answers only when the test lets it (after the client has given up).
using kvc::testing::Gate;

TEST(TransportTest, ARequestPastItsDeadlineFails) {
  FakeApiServer server;
  Gate gate;
  server.setHandler([&](const FakeRequest&, ResponseWriter& out) {
    gate.wait();
    out.respond(200, "{}");
  });
  Api pods =
      Api(clientFor(server), resources::pods(), "a").withTimeout(std::chrono::milliseconds(200));
  auto answer = pods.get("slow");
  gate.open();
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().reason(), ErrorReason::Deadline);
}

TEST(TransportTest, ARequestStopsWhenAskedTo) {
  FakeApiServer server;
  Gate gate;
  std::stop_source stop;
  server.setHandler([&](const FakeRequest&, ResponseWriter& out) {
    stop.request_stop();  // the request is in flight now
    gate.wait();
    out.respond(200, "{}");
  });
  Api pods(clientFor(server), resources::pods(), "a");
  const auto start = std::chrono::steady_clock::now();
  auto answer = pods.get("slow", stop.get_token());
  gate.open();
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().reason(), ErrorReason::Cancelled);
  // Plain requests notice a stop from curl's progress callback (at least once a second).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500));
}

TEST(TransportTest, TlsServerNameAndAPathPrefixAreKept) {
  FakeApiServer server;
  server.setHandler([](const FakeRequest&, ResponseWriter& out) {
    out.respond(200, R"({"metadata": {"name": "p"}})");
  });
  Config config = server.config();
  const std::string port = config.server.substr(config.server.rfind(':') + 1);
  // A proxy-style URL with a path prefix and a trailing slash, reached under another name.
  config.server += "/k8s/clusters/c-1/";
  config.tls_server_name = "api.cluster.test";
  auto client = Client::create(config);
  ASSERT_TRUE(client.ok()) << client.status().toString();
  auto pool = Api(*client, resources::kvCachePools()).get("p");
  ASSERT_TRUE(pool.ok()) << pool.status().toString();
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/k8s/clusters/c-1/apis/worker.gpustack.ai/v1/kvcachepools/p");
  EXPECT_EQ(requests[0].headers.at("host"), "api.cluster.test:" + port);
}

TEST(TransportTest, AServerThatIsNotAUrlIsRefused) {
  Config config;
  config.server = "ftp://example";
  EXPECT_FALSE(Client::create(config).ok());
  config.server = "https://exa mple";
  EXPECT_FALSE(Client::create(config).ok());
}

TEST(TransportTest, ListAllFollowsContinueTokens) {
  FakeApiServer server;
  FakeResourceServer cms("/api/v1/namespaces/a/configmaps", "v1", "ConfigMap");
  for (int i = 0; i < 5; ++i) {
    cms.create(Json{{"metadata", {{"name", "cm-" + std::to_string(i)}, {"namespace", "a"}}}});
  }
  server.setHandler([&](const FakeRequest& r, ResponseWriter& out) { cms.handle(r, out); });
  auto list = Api(clientFor(server), resources::configMaps(), "a").listAll({}, 2);
  ASSERT_TRUE(list.ok()) << list.status().toString();
  ASSERT_EQ(list->items.size(), 5U);
  EXPECT_EQ(object::name(list->items[4]), "cm-4");
  EXPECT_EQ(list->resource_version, std::to_string(cms.resourceVersion()));
  EXPECT_EQ(cms.listCalls(), 3);
  const auto requests = server.requests();
  EXPECT_EQ(requests[1].param("limit"), "2");
  EXPECT_FALSE(requests[1].param("continue").empty());
}

TEST(TransportTest, ListEachHandsOverItemsOneByOne) {
  FakeApiServer server;
  FakeResourceServer cms("/api/v1/namespaces/a/configmaps", "v1", "ConfigMap");
  for (int i = 0; i < 3; ++i) {
    cms.create(Json{{"metadata",
                     {{"name", "cm-" + std::to_string(i)},
                      {"namespace", "a"},
                      {"labels", {{"nested", "object"}}}}}});
  }
  server.setHandler([&](const FakeRequest& r, ResponseWriter& out) { cms.handle(r, out); });
  Api api(clientFor(server), resources::configMaps(), "a");
  std::vector<std::string> names;
  ListParams params;
  params.limit = 2;
  auto first = api.listEach(params, [&](Json&& item) {
    EXPECT_EQ(item["metadata"]["labels"]["nested"], "object");
    names.push_back(object::name(item));
  });
  ASSERT_TRUE(first.ok()) << first.status().toString();
  EXPECT_TRUE(first->items.empty());
  EXPECT_FALSE(first->continue_token.empty());
  params.continue_token = first->continue_token;
  auto second = api.listEach(params, [&](Json&& item) { names.push_back(object::name(item)); });
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->continue_token.empty());
  EXPECT_EQ(second->resource_version, std::to_string(cms.resourceVersion()));
  EXPECT_EQ(names, (std::vector<std::string>{"cm-0", "cm-1", "cm-2"}));
}

TEST(TransportTest, WatchDeliversChunkedEventsUntilTheServerCloses) {
  FakeApiServer server;
  FakeResourceServer cms("/api/v1/namespaces/a/configmaps", "v1", "ConfigMap");
  server.setHandler([&](const FakeRequest& r, ResponseWriter& out) { cms.handle(r, out); });
  const std::string from = std::to_string(cms.resourceVersion());
  cms.create(Json{{"metadata", {{"name", "one"}, {"namespace", "a"}}}});
  Api api(clientFor(server), resources::configMaps(), "a");
  std::vector<WatchEvent> events;
  std::thread driver([&] {
    cms.waitForOpenWatches(1);
    cms.update(Json{{"metadata", {{"name", "one"}, {"namespace", "a"}}}, {"data", {{"k", "v"}}}});
    cms.remove("one");
    cms.bookmark();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cms.closeWatches();
  });
  WatchParams params;
  params.resource_version = from;
  auto end = api.watch(params, [&](WatchEvent&& e) {
    events.push_back(std::move(e));
    return true;
  });
  driver.join();
  ASSERT_TRUE(end.ok()) << end.status().toString();
  EXPECT_EQ(*end, WatchEnd::Closed);
  ASSERT_EQ(events.size(), 4U);
  EXPECT_EQ(events[0].type, WatchEventType::Added);
  EXPECT_EQ(events[1].type, WatchEventType::Modified);
  EXPECT_EQ(events[1].object["data"]["k"], "v");
  EXPECT_EQ(events[2].type, WatchEventType::Deleted);
  EXPECT_EQ(events[3].type, WatchEventType::Bookmark);
  EXPECT_EQ(object::resourceVersion(events[3].object), std::to_string(cms.resourceVersion()));
}

TEST(TransportTest, AWatchFromACompactedVersionGetsAnExpiredErrorEvent) {
  FakeApiServer server;
  FakeResourceServer cms("/api/v1/namespaces/a/configmaps", "v1", "ConfigMap");
  server.setHandler([&](const FakeRequest& r, ResponseWriter& out) { cms.handle(r, out); });
  const std::string old = std::to_string(cms.resourceVersion());
  cms.create(Json{{"metadata", {{"name", "x"}}}});
  cms.compact();
  WatchParams params;
  params.resource_version = old;
  std::optional<ApiError> error;
  auto end =
      Api(clientFor(server), resources::configMaps(), "a").watch(params, [&](WatchEvent&& e) {
        if (e.type == WatchEventType::Error) {
          error = errorFromStatus(e.object);
        }
        return true;
      });
  ASSERT_TRUE(end.ok());
  ASSERT_TRUE(error.has_value());
  EXPECT_TRUE(error->isGone());
}

TEST(TransportTest, AWatchStopsAtOnceWhenAskedTo) {
  FakeApiServer server;
  FakeResourceServer cms("/api/v1/namespaces/a/configmaps", "v1", "ConfigMap");
  server.setHandler([&](const FakeRequest& r, ResponseWriter& out) { cms.handle(r, out); });
  std::stop_source stop;
  std::thread stopper([&] {
    cms.waitForOpenWatches(1);
    stop.request_stop();
  });
  const auto start = std::chrono::steady_clock::now();
  auto end = Api(clientFor(server), resources::configMaps(), "a")
                 .watch(
                     {}, [](WatchEvent&&) { return true; }, stop.get_token());
  stopper.join();
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.error().reason(), ErrorReason::Cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  cms.closeWatches();
}

TEST(TransportTest, AWatchCutMidStreamIsATransportError) {
  FakeApiServer server;
  FakeResourceServer cms("/api/v1/namespaces/a/configmaps", "v1", "ConfigMap");
  server.setHandler([&](const FakeRequest& r, ResponseWriter& out) { cms.handle(r, out); });
  std::thread cutter([&] {
    cms.waitForOpenWatches(1);
    cms.abortWatches();
  });
  auto end = Api(clientFor(server), resources::configMaps(), "a").watch({}, [](WatchEvent&&) {
    return true;
  });
  cutter.join();
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.error().reason(), ErrorReason::Transport);
}

TEST(TransportTest, DiscoveryReadsAnApiResourceList) {
  FakeApiServer server;
  server.setHandler([](const FakeRequest& r, ResponseWriter& out) {
    if (r.path != "/apis/worker.gpustack.ai/v1") {
      out.respond(404, testing::statusBody(404, "NotFound", "no"));
      return;
    }
    out.respond(200, R"({"kind":"APIResourceList","groupVersion":"worker.gpustack.ai/v1",
      "resources":[{"name":"kvcachepools","singularName":"kvcachepool","namespaced":false,
      "kind":"KVCachePool","verbs":["get"]},{"name":"kvcachepools/status","namespaced":false,
      "kind":"KVCachePool","verbs":["get"]},{"name":"kvcachepoolbindings","namespaced":true,
      "kind":"KVCachePoolBinding","verbs":["get"]}]})");
  });
  auto client = clientFor(server);
  auto found = discoverResources(*client, "worker.gpustack.ai", "v1");
  ASSERT_TRUE(found.ok()) << found.status().toString();
  ASSERT_EQ(found->size(), 2U);
  EXPECT_EQ((*found)[0], resources::kvCachePools());
  EXPECT_EQ((*found)[1], resources::kvCachePoolBindings());
  auto md = discoverResource(*client, "worker.gpustack.ai", "v1", "ModelDeployment");
  ASSERT_FALSE(md.ok());
  EXPECT_TRUE(md.error().isNotFound());
}

}  // namespace
}  // namespace kvc::kube
