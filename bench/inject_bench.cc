// policy::inject() on a typical vLLM Pod, a typical SGLang Pod and a large Pod (20 containers,
// 200 env entries), against the baseline of deep-copying the same Pod — the floor of any
// mutation that leaves the input untouched. Besides the mean, each benchmark reports the p50 and
// p99 of single calls (budget: p99 <= 50 us on one core, DESIGN.md §6).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "kvc/api/kvcache.h"
#include "kvc/policy/inject/inject.h"

namespace {

using kvc::Json;

kvc::policy::ClusterSnapshot cluster() {
  kvc::policy::ClusterSnapshot snapshot;
  snapshot.add(*kvc::api::backendFromJson(Json::parse(R"({"metadata": {"name": "mooncake-dram"},
    "spec": {"connection": {"managed": {"leader": {}, "members": [{"medium": "DRAM",
    "capacityPerMember": "8Gi", "nodeSelector": {"kubernetes.io/os": "linux"}}]}}}})")));
  snapshot.add(*kvc::api::poolFromJson(Json::parse(R"({"metadata": {"name": "shared-dram"},
    "spec": {"backends": ["mooncake-dram"], "quota": {"total": "16Gi"}},
    "status": {"clientEndpoint": "mooncake-dram-leader.gpustack-system.svc:50051",
    "conditions": [{"type": "QuotaLedgerAvailable", "status": "True", "reason": "Available"}]}})")));
  snapshot.add(*kvc::api::bindingFromJson(Json::parse(R"({"metadata": {"name": "team-a",
    "namespace": "team-a"}, "spec": {"poolRef": {"name": "shared-dram"},
    "quota": {"ceiling": "8Gi"}, "domain": {"name": "team-a-chat", "blockSize": 64,
    "dtype": "bfloat16"}}})")));
  return snapshot;
}

Json container(const std::string& name, int env_count) {
  Json c = Json::parse(R"({"image": "vllm/vllm-openai:v0.29.0", "command": ["vllm"],
    "args": ["serve", "--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2",
             "--max-model-len", "32768", "--gpu-memory-utilization", "0.9"],
    "ports": [{"containerPort": 8000, "name": "http"}],
    "resources": {"limits": {"nvidia.com/gpu": "2", "memory": "64Gi"},
                  "requests": {"cpu": "8", "memory": "64Gi"}},
    "volumeMounts": [{"name": "models", "mountPath": "/models"},
                     {"name": "shm", "mountPath": "/dev/shm"}],
    "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 5}})");
  c["name"] = name;
  Json env = Json::array();
  for (int i = 0; i < env_count; ++i) {
    env.push_back({{"name", "VAR_" + std::to_string(i)}, {"value", "value-" + std::to_string(i)}});
  }
  c["env"] = env;
  return c;
}

Json pod(const char* engine, int containers, int env_per_container) {
  Json p = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "chat-0", "namespace": "team-a",
      "labels": {"app": "chat", "kvcache.gpustack.ai/inject": "true"},
      "annotations": {"kvcache.gpustack.ai/binding": "team-a"}},
    "spec": {"volumes": [{"name": "models", "persistentVolumeClaim": {"claimName": "models"}},
                         {"name": "shm", "emptyDir": {"medium": "Memory"}}]}})");
  p["metadata"]["annotations"]["kvcache.gpustack.ai/engine"] = engine;
  p["spec"]["containers"] = Json::array();
  for (int i = 0; i < containers; ++i) {
    Json c = container(i == 0 ? "server" : "sidecar-" + std::to_string(i), env_per_container);
    if (std::string(engine) == "SGLang" && i == 0) {
      c["command"] = Json::array({"python3", "-m", "sglang.launch_server"});
      c["args"] = Json::array({"--model-path", "Qwen/Qwen3-8B", "--tp", "2"});
    }
    p["spec"]["containers"].push_back(std::move(c));
  }
  if (containers > 1) {
    p["metadata"]["annotations"]["kvcache.gpustack.ai/container"] = "server";
  }
  return p;
}

// Runs `body` once per iteration, timing each call, and reports p50/p99 in microseconds.
template <typename Body>
void timed(benchmark::State& state, Body&& body) {
  std::vector<double> samples;
  samples.reserve(1 << 16);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    body();
    const auto end = std::chrono::steady_clock::now();
    if (samples.size() < samples.capacity()) {
      samples.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    }
  }
  std::sort(samples.begin(), samples.end());
  if (!samples.empty()) {
    state.counters["p50_us"] = samples[samples.size() / 2];
    state.counters["p99_us"] = samples[samples.size() * 99 / 100];
  }
}

void injectBenchmark(benchmark::State& state, const char* engine, int containers, int env) {
  const kvc::policy::ClusterSnapshot snapshot = cluster();
  const kvc::api::Settings settings;
  const Json input = pod(engine, containers, env);
  timed(state, [&] {
    kvc::policy::Decision decision = kvc::policy::inject(input, "team-a", snapshot, settings);
    if (decision.verdict != kvc::policy::Verdict::Injected) {
      state.SkipWithError("the benchmark Pod was not injected");
    }
    benchmark::DoNotOptimize(decision);
  });
}

void copyBaseline(benchmark::State& state, const char* engine, int containers, int env) {
  const Json input = pod(engine, containers, env);
  timed(state, [&] {
    Json copy = input;
    benchmark::DoNotOptimize(copy);
  });
}

BENCHMARK_CAPTURE(copyBaseline, typical_vllm_pod, "vLLM", 1, 8);
BENCHMARK_CAPTURE(injectBenchmark, typical_vllm_pod, "vLLM", 1, 8);
BENCHMARK_CAPTURE(copyBaseline, typical_sglang_pod, "SGLang", 1, 8);
BENCHMARK_CAPTURE(injectBenchmark, typical_sglang_pod, "SGLang", 1, 8);
BENCHMARK_CAPTURE(copyBaseline, large_pod_20x200, "vLLM", 20, 200);
BENCHMARK_CAPTURE(injectBenchmark, large_pod_20x200, "vLLM", 20, 200);

}  // namespace

BENCHMARK_MAIN();
