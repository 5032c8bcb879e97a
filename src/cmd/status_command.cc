// kvcache status and kvcache diagnose: the whole cluster in one view, and the walkthrough's
// Troubleshooting table walked over it (docs/observability.md).
#include <iostream>

#include "internal/cluster_state_source.h"
#include "kvc/cmd/commands.h"
#include "kvc/policy/observe/diagnose.h"
#include "kvc/policy/observe/status_tree.h"

namespace kvc::cmd {
namespace {

struct ViewOptions {
  ClusterStateOptions source;
  std::string output;
};

int readFailed(std::string_view command, const Status& status) {
  std::cerr << "kvcache " << command << ": " << status.message() << "\n";
  return status.code() == StatusCode::InvalidArgument ? kExitBadInput : kExitFailure;
}

int runStatus(const ViewOptions& options) {
  auto state = readClusterState(options.source);
  if (!state.ok()) {
    return readFailed("status", state.status());
  }
  if (options.output == "json") {
    std::cout << policy::statusTreeJson(*state).dump(2) << "\n";
  } else {
    std::cout << policy::statusTreeText(*state);
  }
  return kExitOk;
}

int runDiagnose(const ViewOptions& options) {
  auto state = readClusterState(options.source);
  if (!state.ok()) {
    return readFailed("diagnose", state.status());
  }
  const std::vector<policy::Finding> findings = policy::diagnose(*state);
  if (options.output == "json") {
    std::cout << policy::findingsJson(findings).dump(2) << "\n";
  } else {
    std::cout << policy::findingsText(findings);
  }
  return policy::anyProblem(findings) ? kExitRefused : kExitOk;
}

CLI::App* addViewCommand(CLI::App& app, const char* name, const char* help,
                         const std::shared_ptr<ViewOptions>& options) {
  CLI::App* command = app.add_subcommand(name, help);
  addClusterStateOptions(*command, options->source);
  command->add_option("-o,--output", options->output, "Output format: json (default: text)")
      ->check(CLI::IsMember({"json"}));
  return command;
}

}  // namespace

void addStatusCommand(CLI::App& app) {
  auto options = std::make_shared<ViewOptions>();
  CLI::App* command = addViewCommand(
      app, "status",
      "One tree from each KVCacheBackend to its pools, their Bindings and the workloads on each "
      "(injected Pods, ModelDeployments): phase, capacity, quota, grants, usage and hit ratio as "
      "the objects report them (an absent figure is shown absent, never as 0), and every "
      "condition that is not True.\nExit codes: 0 read; 2 bad input; 1 the cluster could not be "
      "read.",
      options);
  command->callback([options] {
    const int code = runStatus(*options);
    if (code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

void addDiagnoseCommand(CLI::App& app) {
  auto options = std::make_shared<ViewOptions>();
  CLI::App* command = addViewCommand(
      app, "diagnose",
      "Walk the walkthrough's Troubleshooting table over the cluster: each symptom found, on which "
      "object, its signal (the condition, its reason and message) and the table's fix. Notes are "
      "rows that are not faults (an oversubscribed pool, a declared single-tenant store).\nExit "
      "codes: 0 no problem found (notes only, or nothing); 3 a problem was found; 2 bad input; "
      "1 the cluster could not be read.",
      options);
  command->callback([options] {
    const int code = runDiagnose(*options);
    if (code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

}  // namespace kvc::cmd
