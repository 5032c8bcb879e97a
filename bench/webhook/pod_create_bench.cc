// Pod creation through the real API server with the label (the injection webhook is called) and
// without it (it is not), interleaved so both see the same load. Reports p50/p90/p95/p99 of each
// and the difference (DESIGN.md §6: the labelled p99 within 10 ms of the unlabelled p99).
//
// Usage: bench_pod_create KUBECONFIG NAMESPACE BINDING CREATES
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "latency_table.h"

namespace {

kvc::Json pod(int i, bool labelled, const std::string& binding) {
  kvc::Json p = kvc::Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"labels": {"app": "bench"}, "annotations": {"kvcache.gpustack.ai/engine": "vLLM"}},
    "spec": {"containers": [{"name": "server", "image": "vllm/vllm-openai:v0.29.0",
      "command": ["vllm"], "args": ["serve", "--model", "Qwen/Qwen3-8B"],
      "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}})");
  p["metadata"]["name"] = std::string(labelled ? "labelled-" : "plain-") + std::to_string(i);
  p["metadata"]["annotations"]["kvcache.gpustack.ai/binding"] = binding;
  if (labelled) {
    p["metadata"]["labels"]["kvcache.gpustack.ai/inject"] = "true";
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: bench_pod_create KUBECONFIG NAMESPACE BINDING CREATES\n");
    return 2;
  }
  auto client = kvc::bench::clientFrom(argv[1]);
  if (!client) {
    return 2;
  }
  const kvc::kube::Api pods(*client, kvc::kube::resources::pods(), argv[2]);
  const int creates = std::atoi(argv[4]);
  std::vector<double> plain;
  std::vector<double> labelled;
  for (int i = 0; i < creates; ++i) {
    // Alternate which of the pair goes first, so that neither always follows the other's
    // after-effects (the webhook's asynchronous Event write, the scheduler's bind).
    const bool labelled_first = (i % 2) == 1;
    for (bool with_label : {labelled_first, !labelled_first}) {
      const kvc::Json object = pod(i, with_label, argv[3]);
      const auto start = std::chrono::steady_clock::now();
      auto created = pods.create(object);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!created.ok()) {
        std::fprintf(stderr, "create failed: %s\n", created.error().describe().c_str());
        return 1;
      }
      (with_label ? labelled : plain).push_back(ms);
    }
  }
  kvc::bench::printLatencyTable("Pod create (ms)", "without the label (baseline)", plain,
                                "with the label (injected)", labelled);
  std::printf("creates: %d of each\n", creates);
  return 0;
}
