// kvcache store status: capacity, members and the tenant ledger of a Mooncake master, read from
// its admin port (the same reads the operator makes).
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "kvc/cmd/commands.h"
#include "kvc/store/admin_client.h"
#include "kvc/store/overview.h"

namespace kvc::cmd {
namespace {

struct StoreStatusOptions {
  std::string admin;
  double timeout_seconds = 5.0;
  std::string output = "table";
};

int runStoreStatus(const StoreStatusOptions& options) {
  store::AdminClientOptions client_options;
  client_options.timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_seconds * 1000.0 + 0.5));
  auto client = store::HttpAdminClient::create(options.admin, client_options);
  if (!client.ok()) {
    std::cerr << "kvcache store status: --admin: " << client.status().message() << "\n";
    return kExitBadInput;
  }
  const store::StoreOverview overview = store::readOverview(**client);
  if (options.output == "json") {
    std::cout << store::overviewToJson(overview).dump(2) << "\n";
  } else {
    std::cout << store::renderOverviewTable(overview);
  }
  if (!store::overviewHealthy(overview)) {
    if (options.output == "json") {
      std::cerr << "kvcache store status: the master at " << options.admin
                << " is not serving or part of its state could not be read\n";
    }
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

CLI::App* storeSubcommand(CLI::App& app) {
  // Each `store` subcommand registers itself on the one `store` group, whichever comes first.
  for (CLI::App* existing : app.get_subcommands([](CLI::App*) { return true; })) {
    if (existing->get_name() == "store") {
      return existing;
    }
  }
  CLI::App* store =
      app.add_subcommand("store", "Run or inspect the Mooncake store of a KVCacheBackend");
  store->require_subcommand(1);
  return store;
}

void addStoreCommand(CLI::App& app) {
  CLI::App* store = storeSubcommand(app);
  auto options = std::make_shared<StoreStatusOptions>();
  CLI::App* status =
      store->add_subcommand("status", "Print a master's capacity, members and tenant ledger");
  status->footer(
      "Reads /health, /metrics, /get_segments_detail and /api/v1/tenant_quotas on the master's\n"
      "admin port (9003 by default; `kubectl -n gpustack-system port-forward\n"
      "svc/<backend>-leader 9003` reaches a managed backend's leader).\n"
      "Exit status: 0 when the master is serving and every part was read (a master without\n"
      "multi-tenancy counts as read), 1 when not, 2 on bad flags.");
  status->add_option("--admin", options->admin, "The master's admin address, HOST:PORT")
      ->required();
  status
      ->add_option("--timeout", options->timeout_seconds,
                   "Deadline of each HTTP request, in seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 3600.0));
  status->add_option("-o,--output", options->output, "Output format")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
  status->callback([options] {
    const int code = runStoreStatus(*options);
    if (code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

}  // namespace kvc::cmd
