#include "internal/engine_counters.h"

#include <gtest/gtest.h>

#include <atomic>

#include "kvc/controllers/indexes.h"
#include "kvc/controllers/model_deployment_controller.h"

namespace kvc::controllers::internal {
namespace {

// Answers every GET with `body` and counts the requests.
class CountingHttp final : public store::HttpTransport {
public:
  explicit CountingHttp(std::string body) : body_(std::move(body)) {}
  store::StoreResult<store::HttpResponse> send(const store::HttpRequest& request) override {
    ++requests;
    last_url = request.url;
    last_timeout = request.timeout;
    return store::HttpResponse{200, "text/plain", body_};
  }
  std::atomic<int> requests{0};
  std::string last_url;
  std::chrono::milliseconds last_timeout{0};

private:
  std::string body_;
};

Json heldPod(std::string name, bool ready = true) {
  Json pod = {
      {"metadata",
       {{"name", std::move(name)},
        {"namespace", "team-a"},
        {"uid", "u1"},
        {"labels", {{"kvcache.gpustack.ai/inject", "true"}}},
        {"annotations",
         {{"kvcache.gpustack.ai/binding", "chat"},
          {"kvcache.gpustack.ai/injected", R"({"binding":"chat","engine":"vllm"})"}}}}},
      {"spec", {{"containers", Json::array({{{"name", "server"}, {"args", {"--port", "8100"}}}})}}},
      {"status",
       {{"phase", "Running"},
        {"podIP", "10.210.1.7"},
        {"conditions", Json::array({{{"type", "Ready"},
                                     {"status", ready ? "True" : "False"},
                                     {"lastTransitionTime", "2023-11-14T22:11:40Z"}}})}}}};
  return pod;
}

struct Fixture {
  runtime::Store held;
  std::shared_ptr<EngineCounterBook> book = std::make_shared<EngineCounterBook>();
  std::shared_ptr<CountingHttp> http = std::make_shared<CountingHttp>(
      "vllm:external_prefix_cache_queries_total{engine=\"0\"} 1000.0\n"
      "vllm:external_prefix_cache_hits_total{engine=\"0\"} 250.0\n");
  FakeClock clock;
  api::Settings settings;

  Fixture() { held.addIndex(kPodsByBinding, &podBinding); }
  void put(const Json& pod) {
    held.upsert("team-a/" + stringAt(pod, {"metadata", "name"}), pod, runtime::packObject(pod));
  }
  EngineCounterReader reader() {
    EngineCounterReaderConfig config;
    config.sources.held_pods = &held;
    config.book = book;
    config.http = http;
    config.settings = [this] { return settings; };
    config.clock = &clock;
    return EngineCounterReader(std::move(config));
  }
};

TEST(EngineCounterReader, ReadsAReadyPodAtMostOncePerResync) {
  Fixture f;
  f.put(heldPod("chat-0"));
  EngineCounterReader reader = f.reader();
  const runtime::Request request{"team-a", "chat-0"};
  auto first = reader.reconcile(request, {});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->requeue_after, std::chrono::seconds(30));
  EXPECT_EQ(f.http->requests, 1);
  EXPECT_EQ(f.http->last_url, "http://10.210.1.7:8100/metrics");
  EXPECT_EQ(f.http->last_timeout, std::chrono::milliseconds(2000));
  ASSERT_TRUE(f.book->find("team-a/chat-0")->counts);
  EXPECT_EQ(f.book->find("team-a/chat-0")->counts->hits, 250);

  f.clock.advance(std::chrono::seconds(10));  // an event on the Pod 10 s later
  auto again = reader.reconcile(request, {});
  EXPECT_EQ(f.http->requests, 1);
  EXPECT_EQ(again->requeue_after, std::chrono::seconds(20));
  f.clock.advance(std::chrono::seconds(20));
  (void)reader.reconcile(request, {});
  EXPECT_EQ(f.http->requests, 2);
}

TEST(EngineCounterReader, ForgetsAPodGoneOrNotReadyAndReadsNothingWhenOff) {
  Fixture f;
  f.put(heldPod("chat-0"));
  EngineCounterReader reader = f.reader();
  const runtime::Request request{"team-a", "chat-0"};
  (void)reader.reconcile(request, {});
  f.put(heldPod("chat-0", /*ready=*/false));
  (void)reader.reconcile(request, {});
  EXPECT_FALSE(f.book->find("team-a/chat-0"));
  f.put(heldPod("chat-0"));
  f.settings.engine_metrics = false;
  auto off = reader.reconcile(request, {});
  EXPECT_EQ(off->requeue_after, std::chrono::seconds(30));  // looked at again at the resync
  EXPECT_EQ(f.http->requests, 1);
  f.held.remove("team-a/chat-0");
  f.settings.engine_metrics = true;
  auto gone = reader.reconcile(request, {});
  EXPECT_FALSE(gone->requeue_after);
  EXPECT_EQ(f.book->size(), 0u);
}

TEST(EngineCounterReader, TheBindingsUseFromTheCachesAndTheBook) {
  Fixture f;
  f.put(heldPod("chat-0"));
  f.put(heldPod("chat-1", /*ready=*/false));
  EngineCounterReader reader = f.reader();
  (void)reader.reconcile({"team-a", "chat-0"}, {});
  const policy::BindingUse use = bindingUseOf(EnginePodSources{&f.held, nullptr, nullptr}, *f.book,
                                              f.settings, "team-a/chat", f.clock.wallNow());
  ASSERT_EQ(use.pods.size(), 1u);  // the Pod that is not Ready is none of them
  EXPECT_EQ(use.pods[0].name, "chat-0");
  EXPECT_EQ(use.pods[0].ready_seconds, 100);  // 1700000000 - 1699999900
  EXPECT_EQ(policy::hitRate(use), "0.25");
}

TEST(EnginePods, AModelDeploymentsReplicasWithTheCacheAttached) {
  runtime::Store deployments;
  deployments.addIndex(kModelDeploymentsByBinding, &modelDeploymentBinding);
  runtime::Store replicas;
  replicas.addIndex(kReplicasByDeployment, &replicaDeployment);
  const Json attached = {
      {"metadata", {{"name", "qwen"}, {"namespace", "team-a"}}},
      {"spec", {{"engine", {{"name", "SGLang"}}}, {"kvCache", {{"poolRef", {{"name", "chat"}}}}}}}};
  deployments.upsert("team-a/qwen", attached, runtime::packObject(attached));
  Json replica = heldPod("qwen-server-0");
  replica["metadata"].erase("annotations");
  replica["metadata"]["labels"] = {{"app.kubernetes.io/name", "model-deployment"},
                                   {"app.kubernetes.io/instance", "qwen"}};
  replicas.upsert("team-a/qwen-server-0", replica, runtime::packObject(replica));
  Json done = replica;
  done["metadata"]["name"] = "qwen-server-1";
  done["status"]["phase"] = "Succeeded";
  replicas.upsert("team-a/qwen-server-1", done, runtime::packObject(done));

  const EnginePodSources sources{nullptr, &deployments, &replicas};
  const std::vector<EnginePod> pods = enginePodsOf(sources, "team-a/chat");
  ASSERT_EQ(pods.size(), 1u);  // the Succeeded one runs no more
  EXPECT_EQ(pods[0].engine, "sglang");
  EXPECT_EQ(engineOf(sources, replica), "sglang");
  Json detached = attached;
  detached["spec"].erase("kvCache");
  deployments.upsert("team-a/qwen", detached, runtime::packObject(detached));
  EXPECT_EQ(engineOf(sources, replica), "");  // no cache attached: none of a Binding's Pods
}

}  // namespace
}  // namespace kvc::controllers::internal
