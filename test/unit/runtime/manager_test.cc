// The manager end to end against the fake API server: it takes the Lease, syncs its informer,
// starts a controller that writes status through the StatusWriter, serves its probes and
// metrics, and on stop drains the controller and releases the Lease. Also: the client outlives
// the manager; a second informer registration that wants another cache is refused.
#include "kvc/runtime/manager.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "eventually.h"
#include "fake_apiserver.h"
#include "kvc/runtime/status_writer.h"

namespace kvc::runtime {
namespace {

using testing::FakeApiServer;
using testing::FakeRequest;
using testing::FakeResourceServer;
using testing::ResponseWriter;

using testing::eventually;

// Marks every Binding seen: the smallest status writer (status.phase, and the observedGeneration
// the StatusWriter stamps).
class SeenReconciler final : public Reconciler {
public:
  SeenReconciler(kube::ClientPtr client, const Cache& cache)
      : writer_(std::move(client), kube::resources::kvCachePoolBindings()), cache_(cache) {}
  Result<Action> reconcile(const Request& request, std::stop_token stop) override {
    ObjectPtr object = cache_.get(request.key());
    if (!object) {
      return Action::done();
    }
    Json status = (*object).value("status", Json::object());
    status["phase"] = "Seen";
    KVC_ASSIGN_OR_RETURN(StatusWrite written, writer_.write(*object, std::move(status), stop));
    (void)written;
    return Action::done();
  }

private:
  StatusWriter writer_;
  const Cache& cache_;
};

// Leases in one namespace with optimistic concurrency, as the API server keeps them.
class FakeLeases {
public:
  void handle(const FakeRequest& r, ResponseWriter& out) {
    std::lock_guard<std::mutex> guard(mutex_);
    const std::string prefix = "/apis/coordination.k8s.io/v1/namespaces/gpustack-system/leases";
    if (r.method == "POST" && r.path == prefix) {
      if (lease_) {
        out.respond(409, testing::statusBody(409, "AlreadyExists", "exists"));
        return;
      }
      lease_ = Json::parse(r.body);
      (*lease_)["metadata"]["resourceVersion"] = std::to_string(++rv_);
      out.respond(201, lease_->dump());
      return;
    }
    if (r.path != prefix + "/kvcache-operator") {
      out.respond(404, testing::statusBody(404, "NotFound", "no"));
      return;
    }
    if (r.method == "GET") {
      if (!lease_) {
        out.respond(404, testing::statusBody(404, "NotFound", "leases \"kvcache-operator\""));
      } else {
        out.respond(200, lease_->dump());
      }
      return;
    }
    if (r.method == "PUT") {
      Json update = Json::parse(r.body);
      if (!lease_ ||
          update["metadata"]["resourceVersion"] != (*lease_)["metadata"]["resourceVersion"]) {
        out.respond(409, testing::statusBody(409, "Conflict", "the object has been modified"));
        return;
      }
      lease_ = update;
      (*lease_)["metadata"]["resourceVersion"] = std::to_string(++rv_);
      out.respond(200, lease_->dump());
      return;
    }
    out.respond(405, testing::statusBody(405, "MethodNotAllowed", "no"));
  }
  std::string holder() {
    std::lock_guard<std::mutex> guard(mutex_);
    return lease_ ? (*lease_)["spec"].value("holderIdentity", std::string()) : std::string();
  }

private:
  std::mutex mutex_;
  std::optional<Json> lease_;
  int rv_ = 0;
};

std::pair<int, std::string> get(const std::string& address, const std::string& path) {
  kube::Config config;
  config.server = "http://" + address;
  kube::HttpRequest request;
  request.method = "GET";
  request.url = path;
  auto answer = (*kube::Client::create(config))->send(request);
  if (answer.ok()) {
    return {answer->status, answer->body};
  }
  return {answer.error().httpStatus(), answer.error().message()};
}

TEST(ManagerTest, LeadsRunsTheControllerServesProbesAndReleasesOnStop) {
  FakeApiServer server;
  FakeLeases leases;
  FakeResourceServer bindings("/apis/worker.gpustack.ai/v1/kvcachepoolbindings",
                              "worker.gpustack.ai/v1", "KVCachePoolBinding");
  std::mutex mutex;
  std::vector<Json> status_patches;
  server.setHandler([&](const FakeRequest& r, ResponseWriter& out) {
    if (r.path.find("/leases") != std::string::npos) {
      leases.handle(r, out);
    } else if (r.method == "PUT" && r.path.ends_with("/status")) {
      std::lock_guard<std::mutex> guard(mutex);
      status_patches.push_back(Json::parse(r.body));
      EXPECT_EQ(r.param("fieldManager"), "kvcache-operator");
      out.respond(200, r.body);
    } else {
      bindings.handle(r, out);
    }
  });
  bindings.create(Json::parse(R"({"metadata":{"name":"b","namespace":"team-a","generation":2},
      "spec":{"poolRef":"p"},"status":{"phase":"Bound"}})"));
  bindings.create(Json::parse(R"({"metadata":{"name":"steady","namespace":"team-a",
      "generation":1},"status":{"observedGeneration":1,"phase":"Seen"}})"));

  auto client = *kube::Client::create(server.config());
  ManagerOptions options;
  options.identity = "replica-a";
  options.lease_duration = std::chrono::seconds(3);
  options.renew_deadline = std::chrono::seconds(2);
  options.retry_period = std::chrono::milliseconds(500);
  options.health_address = "127.0.0.1:0";
  options.metrics_address = "127.0.0.1:0";
  auto created = Manager::create(client, options);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  Manager& manager = **created;
  InformerOptions io;
  io.resource = kube::resources::kvCachePoolBindings();
  InformerPtr informer = *manager.informerFor(io);
  ControllerOptions co;
  co.name = "seen";
  co.metrics = &manager.metrics();
  auto controller = std::make_shared<Controller>(
      std::move(co), std::make_shared<SeenReconciler>(client, informer->cache()));
  controller->watch(*informer);
  manager.addController(controller);

  std::stop_source stop;
  Status result;
  std::thread runner([&] { result = manager.run(stop.get_token()); });
  ASSERT_TRUE(eventually([&] { return manager.isLeader(); }));
  EXPECT_EQ(leases.holder(), "replica-a");
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> guard(mutex);
    return !status_patches.empty();
  }));
  {
    std::lock_guard<std::mutex> guard(mutex);
    ASSERT_EQ(status_patches.size(), 1U);  // "steady" is already in step: no write
    EXPECT_EQ(status_patches[0]["metadata"]["name"], "b");
    EXPECT_EQ(status_patches[0]["status"],
              Json::parse(R"({"phase":"Seen","observedGeneration":2})"));
  }
  EXPECT_EQ(get(manager.healthAddress(), "/healthz").first, 200);
  EXPECT_EQ(get(manager.healthAddress(), "/readyz").first, 200);
  const auto metrics = get(manager.metricsAddress(), "/metrics");
  EXPECT_EQ(metrics.first, 200);
  EXPECT_NE(metrics.second.find("leader_election_master_status{name=\"kvcache-operator\"} 1"),
            std::string::npos)
      << metrics.second;
  EXPECT_NE(metrics.second.find("workqueue_depth{name=\"seen\"}"), std::string::npos);
  EXPECT_NE(metrics.second.find("rest_client_requests_total{code=\"201\",method=\"POST\","
                                "resource=\"leases\"}"),
            std::string::npos)
      << metrics.second;

  stop.request_stop();
  runner.join();
  EXPECT_TRUE(result.ok()) << result.toString();
  EXPECT_EQ(leases.holder(), "");  // released on shutdown
  server.stop();
}

TEST(ManagerTest, RefusesBadLeaseTiming) {
  FakeApiServer server;
  ManagerOptions options;
  options.lease_duration = std::chrono::seconds(5);
  options.renew_deadline = std::chrono::seconds(5);
  EXPECT_EQ(Manager::create(*kube::Client::create(server.config()), options).status().code(),
            StatusCode::InvalidArgument);
}

TEST(ManagerTest, TheClientOutlivesTheManagerAndItsMetrics) {
  // The manager installs a metrics observer on the shared client; the client lives on (the
  // webhooks' view holds it). A request after the manager is gone must not touch its registry
  // (a use-after-free under ASan before the fix).
  FakeApiServer server;
  server.setHandler([](const FakeRequest&, ResponseWriter& out) { out.respond(200, "{}"); });
  auto client = *kube::Client::create(server.config());
  {
    ManagerOptions options;
    options.leader_elect = false;
    options.health_address = "0";
    options.metrics_address = "0";
    auto manager = Manager::create(client, options);
    ASSERT_TRUE(manager.ok());
    kube::Api api(client, kube::resources::configMaps(), "a");
    ASSERT_TRUE(api.getOptional("x").ok());
    EXPECT_NE((*manager)->metrics().render().find("rest_client_requests_total"), std::string::npos);
  }
  kube::Api api(client, kube::resources::configMaps(), "a");
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 20; ++k) {
        (void)api.getOptional("x");
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_GE(server.requestCount(), 81U);
}

TEST(ManagerTest, ASecondRegistrationOfAnInformerWithAnotherCacheIsRefused) {
  FakeApiServer server;
  ManagerOptions options;
  options.leader_elect = false;
  auto manager = Manager::create(*kube::Client::create(server.config()), options);
  ASSERT_TRUE(manager.ok());
  InformerOptions pods;
  pods.resource = kube::resources::pods();
  pods.label_selector = "kvcache.gpustack.ai/inject=true";
  pods.transform = keepFields({"/status/phase"});
  auto first = (*manager)->informerFor(pods);
  ASSERT_TRUE(first.ok());
  auto same = (*manager)->informerFor(pods);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, *first);  // shared
  InformerOptions other = pods;
  other.transform = stripTransform();
  auto refused = (*manager)->informerFor(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::InvalidArgument);
  EXPECT_NE(refused.status().message().find("keep:/status/phase"), std::string::npos);
  other = pods;
  other.resync_period = std::chrono::seconds(30);
  EXPECT_FALSE((*manager)->informerFor(other).ok());
}

}  // namespace
}  // namespace kvc::runtime
