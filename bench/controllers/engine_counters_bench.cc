// The engine counter reader's cost (issue 26 §2; docs/performance.md "Reading the engines'
// counters"): what reading the hit and query counters of 1,000 injected Pods once per resync
// costs the operator. A local HTTP server answers every Pod's /metrics with a vLLM-sized
// exposition (the two counters among 40 histogram families, ~90 KB, as a vLLM server with a few
// models writes); the Pods are what the informer keeps of them (heldPodProjection).
//
//   BM_HttpFloor      baseline: a GET answered with the two counters alone, parsed
//   BM_ReadOnePod     one Pod read by the reader: target, GET of the whole exposition, parse, book
//   BM_ReadRound      every one of the 1,000 Pods once (a resync's reading)
//   BM_BindingUses    the pool pass's added work: 100 Bindings x 10 Pods, from the caches and
//                     the book (BindingUse for each)
//   BM_ProjectPod     the projection of one full Pod into the cache, its bytes as a counter
// Ratios: BM_ReadOnePod / BM_HttpFloor per Pod; BM_ReadRound against a 30 s resync.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "internal/engine_counters.h"
#include "kvc/controllers/indexes.h"
#include "kvc/runtime/http_server.h"

namespace kvc::controllers::internal {
namespace {

constexpr int kPods = 1000;
constexpr int kBindings = 100;

std::string vllmExposition() {
  std::string text =
      "# TYPE vllm:external_prefix_cache_queries_total counter\n"
      "vllm:external_prefix_cache_queries_total{engine=\"0\",model_name=\"qwen\"} 128000.0\n"
      "# TYPE vllm:external_prefix_cache_hits_total counter\n"
      "vllm:external_prefix_cache_hits_total{engine=\"0\",model_name=\"qwen\"} 96000.0\n";
  for (int family = 0; family < 40; ++family) {
    const std::string name = "vllm:request_latency_family_" + std::to_string(family) + "_seconds";
    text += "# HELP " + name + " Histogram of a latency.\n# TYPE " + name + " histogram\n";
    for (int bucket = 0; bucket < 20; ++bucket) {
      text += name + "_bucket{engine=\"0\",le=\"" + std::to_string(bucket * 0.25) +
              "\",model_name=\"qwen\"} " + std::to_string(bucket * 17) + ".0\n";
    }
    text += name + "_count{engine=\"0\",model_name=\"qwen\"} 340.0\n";
    text += name + "_sum{engine=\"0\",model_name=\"qwen\"} 1234.5\n";
  }
  return text;
}

Json fullPod(int i, int port) {
  const std::string name = "chat-" + std::to_string(i);
  Json env = Json::array();
  for (int v = 0; v < 12; ++v) {
    env.push_back({{"name", "MOONCAKE_VAR_" + std::to_string(v)}, {"value", std::string(40, 'x')}});
  }
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", "team-" + std::to_string(i % kBindings)},
        {"uid", "uid-" + std::to_string(i)},
        {"resourceVersion", "1"},
        {"labels", {{"kvcache.gpustack.ai/inject", "true"}}},
        {"annotations",
         {{"kvcache.gpustack.ai/binding", "chat"},
          {"kvcache.gpustack.ai/injected",
           R"({"binding":"chat","engine":"vllm","vehicle":"file","domain":"team-a-chat",)"
           R"("tenantInjected":true,"launchProgram":"vllm","launchArgsForwarded":false})"},
          {"kvcache.gpustack.ai/client-config", std::string(400, 'c')}}}}},
      {"spec",
       {{"containers",
         Json::array(
             {{{"name", "server"},
               {"image", "gpustack/runner:cuda13.0-vllm0.29.0"},
               {"command", {"vllm"}},
               {"args",
                {"serve", "Qwen/Qwen2.5-7B-Instruct", "--kv-transfer-config",
                 std::string(300, 'k')}},
               {"ports", Json::array({{{"name", "metrics"}, {"containerPort", port}}})},
               {"env", env},
               {"volumeMounts", Json::array({{{"name", "cfg"}, {"mountPath", "/etc/m"}}})}}})},
        {"volumes", Json::array({{{"name", "cfg"}, {"projected", {{"sources", Json::array()}}}}})},
        {"nodeName", "node-1"}}},
      {"status",
       {{"phase", "Running"},
        {"podIP", "127.0.0.1"},
        {"conditions", Json::array({{{"type", "Ready"},
                                     {"status", "True"},
                                     {"lastTransitionTime", "2026-12-05T10:00:00Z"}}})}}}};
}

struct World {
  std::unique_ptr<runtime::HttpServer> server;
  runtime::Store held;
  std::shared_ptr<EngineCounterBook> book = std::make_shared<EngineCounterBook>();
  std::unique_ptr<EngineCounterReader> reader;
  std::vector<runtime::Request> requests;

  World() {
    const std::string full = vllmExposition();
    const std::string floor =
        "vllm:external_prefix_cache_queries_total 128000.0\n"
        "vllm:external_prefix_cache_hits_total 96000.0\n";
    server = std::move(
        runtime::HttpServer::create(
            runtime::ListenAddress{"127.0.0.1", 0},
            runtime::routeByPath({{"/metrics",
                                   [full](const runtime::HttpServerRequest&) {
                                     return runtime::HttpServerResponse{200, "text/plain", full};
                                   }},
                                  {"/floor",
                                   [floor](const runtime::HttpServerRequest&) {
                                     return runtime::HttpServerResponse{200, "text/plain", floor};
                                   }}}))
            .value());
    server->start();
    held.addIndex(kPodsByBinding, &podBinding);
    const runtime::Transform project = heldPodProjection();
    for (int i = 0; i < kPods; ++i) {
      Json pod = fullPod(i, server->port());
      project(pod);
      const std::string key =
          stringAt(pod, {"metadata", "namespace"}) + "/" + stringAt(pod, {"metadata", "name"});
      held.upsert(key, pod, runtime::packObject(pod));
      requests.push_back(runtime::Request::fromKey(key));
    }
    EngineCounterReaderConfig config;
    config.sources.held_pods = &held;
    config.book = book;
    config.http = store::newCurlTransport();
    config.resync = Clock::Duration::zero();  // every reconcile reads
    reader = std::make_unique<EngineCounterReader>(std::move(config));
  }
};

World& world() {
  static World w;
  return w;
}

void BM_HttpFloor(benchmark::State& state) {
  World& w = world();
  auto http = store::newCurlTransport();
  store::HttpRequest request;
  request.url = "http://127.0.0.1:" + std::to_string(w.server->port()) + "/floor";
  for (auto _ : state) {
    auto answer = http->send(request);
    auto counts = policy::engineCounts(answer->body, "vllm");
    benchmark::DoNotOptimize(counts);
  }
}
BENCHMARK(BM_HttpFloor)->Unit(benchmark::kMicrosecond);

void BM_ReadOnePod(benchmark::State& state) {
  World& w = world();
  std::size_t i = 0;
  for (auto _ : state) {
    auto action = w.reader->reconcile(w.requests[i++ % w.requests.size()], {});
    benchmark::DoNotOptimize(action);
  }
  state.counters["exposition_bytes"] = double(vllmExposition().size());
}
BENCHMARK(BM_ReadOnePod)->Unit(benchmark::kMicrosecond);

void BM_ReadRound(benchmark::State& state) {
  World& w = world();
  for (auto _ : state) {
    for (const runtime::Request& request : w.requests) {
      auto action = w.reader->reconcile(request, {});
      benchmark::DoNotOptimize(action);
    }
  }
  state.SetItemsProcessed(state.iterations() * kPods);
}
BENCHMARK(BM_ReadRound)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_BindingUses(benchmark::State& state) {
  World& w = world();
  for (const runtime::Request& request : w.requests) {
    (void)w.reader->reconcile(request, {});
  }
  const EnginePodSources sources{&w.held, nullptr, nullptr};
  const api::Settings settings;
  const Clock::WallTime now = realClock().wallNow();
  for (auto _ : state) {
    for (int b = 0; b < kBindings; ++b) {
      auto use =
          bindingUseOf(sources, *w.book, settings, "team-" + std::to_string(b) + "/chat", now);
      benchmark::DoNotOptimize(use);
    }
  }
  state.SetItemsProcessed(state.iterations() * kBindings);
}
BENCHMARK(BM_BindingUses)->Unit(benchmark::kMicrosecond);

void BM_ProjectPod(benchmark::State& state) {
  const Json full = fullPod(0, 8000);
  const runtime::Transform project = heldPodProjection();
  std::size_t kept = 0;
  for (auto _ : state) {
    Json pod = full;
    project(pod);
    kept = runtime::packObject(pod)->size();
    benchmark::DoNotOptimize(kept);
  }
  state.counters["full_pod_bytes"] = double(runtime::packObject(full)->size());
  state.counters["cached_pod_bytes"] = double(kept);
}
BENCHMARK(BM_ProjectPod)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kvc::controllers::internal

BENCHMARK_MAIN();
