// Pod creation through the real API server with the label (the injection webhook is called) and
// without it (it is not), interleaved so both see the same load. Reports p50/p99 of each and the
// difference (DESIGN.md §6: the labelled p99 within 10 ms of the unlabelled p99).
//
// Usage: bench_pod_create KUBECONFIG NAMESPACE BINDING CREATES
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kvc/kube/client.h"
#include "kvc/kube/config.h"

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

double percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return samples[static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: bench_pod_create KUBECONFIG NAMESPACE BINDING CREATES\n");
    return 2;
  }
  auto config = kvc::kube::loadKubeconfig(argv[1]);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    return 2;
  }
  auto client = kvc::kube::Client::create(*config);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().message().c_str());
    return 2;
  }
  const kvc::kube::Api pods(*client, kvc::kube::resources::pods(), argv[2]);
  const int creates = std::atoi(argv[4]);
  std::vector<double> plain;
  std::vector<double> labelled;
  for (int i = 0; i < creates; ++i) {
    for (bool withLabel : {false, true}) {
      const kvc::Json object = pod(i, withLabel, argv[3]);
      const auto start = std::chrono::steady_clock::now();
      auto created = pods.create(object);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!created.ok()) {
        std::fprintf(stderr, "create failed: %s\n", created.error().describe().c_str());
        return 1;
      }
      (withLabel ? labelled : plain).push_back(ms);
    }
  }
  const double p50Plain = percentile(plain, 0.5);
  const double p99Plain = percentile(plain, 0.99);
  const double p50Labelled = percentile(labelled, 0.5);
  const double p99Labelled = percentile(labelled, 0.99);
  std::printf("%-34s %10s %10s\n", "Pod create (ms)", "p50", "p99");
  std::printf("%-34s %10.2f %10.2f\n", "without the label (baseline)", p50Plain, p99Plain);
  std::printf("%-34s %10.2f %10.2f\n", "with the label (injected)", p50Labelled, p99Labelled);
  std::printf("%-34s %10.2f %10.2f\n", "difference", p50Labelled - p50Plain,
              p99Labelled - p99Plain);
  std::printf("creates: %d of each\n", creates);
  return 0;
}
