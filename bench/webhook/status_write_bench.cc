// Status writes through the real API server, the kubelet's most frequent write, on a Pod that
// carries the inject label (the freeze webhook is registered for its pods/status) and on one that
// does not, interleaved so both see the same load. Each write changes a condition's time and
// message, as the kubelet's do. Reports p50/p90/p95/p99 of each and the difference: the cost the
// freeze adds to a status write (bench/webhook/status_write.sh).
//
// Usage: bench_status_write KUBECONFIG NAMESPACE LABELLED-POD PLAIN-POD WRITES
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "latency_table.h"

namespace {

kvc::Json statusWrite(int i) {
  kvc::Json condition = {{"type", "kvcache.example/Bench"},
                         {"status", "True"},
                         {"lastProbeTime", nullptr},
                         {"lastTransitionTime", "2026-12-01T00:00:00Z"},
                         {"message", "write " + std::to_string(i)}};
  return {{"status", {{"conditions", kvc::Json::array({condition})}}}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: bench_status_write KUBECONFIG NAMESPACE LABELLED-POD PLAIN-POD WRITES\n");
    return 2;
  }
  auto client = kvc::bench::clientFrom(argv[1]);
  if (!client) {
    return 2;
  }
  const kvc::kube::Api pods(*client, kvc::kube::resources::pods(), argv[2]);
  const int writes = std::atoi(argv[5]);
  std::vector<double> plain;
  std::vector<double> labelled;
  for (int i = 0; i < writes; ++i) {
    const bool labelled_first = (i % 2) == 1;
    for (bool with_label : {labelled_first, !labelled_first}) {
      const auto start = std::chrono::steady_clock::now();
      auto written = pods.patchStatus(with_label ? argv[3] : argv[4],
                                      kvc::kube::StrategicMergePatch{statusWrite(i)});
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!written.ok()) {
        std::fprintf(stderr, "status write failed: %s\n", written.error().describe().c_str());
        return 1;
      }
      (with_label ? labelled : plain).push_back(ms);
    }
  }
  kvc::bench::printLatencyTable("Pod status write (ms)", "without the label (baseline)", plain,
                                "with the label (freeze registered)", labelled);
  std::printf("writes: %d of each\n", writes);
  return 0;
}
