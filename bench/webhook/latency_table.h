#pragma once
// What the through-the-API-server benches share: a client from a kubeconfig, and the
// p50/p90/p95/p99 table of a labelled series against its unlabelled baseline.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "kvc/kube/client.h"
#include "kvc/kube/config.h"

namespace kvc::bench {

// The client, or nullopt after printing why.
inline std::optional<kube::ClientPtr> clientFrom(const char* kubeconfig) {
  auto config = kube::loadKubeconfig(kubeconfig);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    return std::nullopt;
  }
  auto client = kube::Client::create(*config);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().message().c_str());
    return std::nullopt;
  }
  return *client;
}

inline double percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return samples[static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1))];
}

// The table: a title row, the baseline, the labelled series and their difference, per quantile.
inline void printLatencyTable(const char* title, const char* baseline_name,
                              const std::vector<double>& baseline, const char* labelled_name,
                              const std::vector<double>& labelled) {
  const double quantiles[] = {0.5, 0.9, 0.95, 0.99};
  std::printf("%-34s %10s %10s %10s %10s\n", title, "p50", "p90", "p95", "p99");
  auto row = [&](const char* name, auto value) {
    std::printf("%-34s", name);
    for (double q : quantiles) {
      std::printf(" %10.2f", value(q));
    }
    std::printf("\n");
  };
  row(baseline_name, [&](double q) { return percentile(baseline, q); });
  row(labelled_name, [&](double q) { return percentile(labelled, q); });
  row("difference", [&](double q) { return percentile(labelled, q) - percentile(baseline, q); });
}

}  // namespace kvc::bench
