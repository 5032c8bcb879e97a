// Serves the admission routes with a cluster file standing in for the cluster, so the server can
// be measured alone (no API server, no live reads): bench/webhook/run.sh drives it with wrk.
//
// Usage: bench_webhook_server CLUSTER.yaml CERT KEY THREADS
// Prints the port on stdout, serves until SIGTERM/SIGINT.
#include <csignal>
#include <iostream>
#include <memory>

#include "internal/cluster_file.h"
#include "kvc/runtime/allocator.h"
#include "kvc/webhook/routes.h"
#include "kvc/webhook/server.h"

int main(int argc, char** argv) {
  kvc::runtime::tuneAllocatorForCaches();  // as `kvcache operator` does
  if (argc != 5) {
    std::cerr << "usage: bench_webhook_server CLUSTER.yaml CERT KEY THREADS\n";
    return 2;
  }
  auto cluster = kvc::cmd::loadClusterFile(argv[1]);
  if (!cluster.ok()) {
    std::cerr << cluster.status().message() << "\n";
    return 2;
  }
  auto snapshot = std::make_shared<kvc::policy::ClusterSnapshot>(std::move(cluster->snapshot));
  const kvc::api::Settings settings = cluster->settings;
  kvc::runtime::Registry metrics;
  kvc::webhook::WebhookRoutes routes;
  routes.metrics = &metrics;
  routes.ready = [] { return true; };
  routes.mutator = std::make_shared<kvc::webhook::PodMutator>(
      snapshot, [settings] { return settings; },
      std::make_shared<kvc::webhook::InjectionMetrics>(metrics));

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // the server threads inherit the mask

  kvc::runtime::HttpServerOptions options = kvc::webhook::defaultServerOptions();
  options.cert_file = argv[2];
  options.key_file = argv[3];
  options.threads = std::atoi(argv[4]);
  auto server = kvc::webhook::startServer(options, routes);
  if (!server.ok()) {
    std::cerr << server.status().message() << "\n";
    return 1;
  }
  std::cout << (*server)->port() << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  (*server)->stop();
  return 0;
}
