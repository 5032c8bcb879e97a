// kvcache inject: the webhook's decision, offline (DESIGN.md §5).
#include <iostream>

#include "internal/cluster_source.h"
#include "internal/injection_run.h"
#include "kvc/cmd/commands.h"

namespace kvc::cmd {
namespace {

struct InjectOptions {
  std::string file;
  ClusterSourceOptions source;
  std::string output = "yaml";
  std::string namespace_name = "default";
};

int runInject(const InjectOptions& options) {
  auto cluster = openClusterSource(options.source);
  if (!cluster.ok()) {
    std::cerr << "kvcache inject: " << cluster.status().message() << "\n";
    return cluster.status().code() == StatusCode::InvalidArgument ? kExitBadInput : kExitFailure;
  }
  for (const std::string& warning : cluster->warnings) {
    std::cerr << "kvcache inject: warning: " << warning << "\n";
  }
  auto outcomes =
      runInjection(options.file, *cluster->view, cluster->settings, options.namespace_name);
  if (!outcomes.ok()) {
    std::cerr << "kvcache inject: " << outcomes.status().message() << "\n";
    return kExitBadInput;
  }

  // All or nothing: any refusal prints nothing on stdout, so a pipe into `kubectl apply` never
  // applies half a manifest. Every refusal is reported, not just the first.
  const std::vector<std::string> refusals = refusalLines(*outcomes);
  if (!refusals.empty()) {
    bool refused = false;
    for (const DocumentOutcome& document : *outcomes) {
      for (const SiteOutcome& site : document.sites) {
        refused = refused || site.decision.verdict == policy::Verdict::Refused;
      }
    }
    for (const std::string& line : refusals) {
      std::cerr << line << "\n";
    }
    return refused ? kExitRefused : kExitFailure;
  }
  std::cout << formatDocuments(*outcomes, options.output);
  return kExitOk;
}

}  // namespace

void addInjectCommand(CLI::App& app) {
  auto options = std::make_shared<InjectOptions>();
  CLI::App* command = app.add_subcommand(
      "inject",
      "Print manifests as the admission webhook would admit them: opted-in Pods and pod "
      "templates injected, everything else unchanged.\n"
      "Exit codes: 0 every document printed; 3 a document was refused (nothing is printed, each "
      "refusal goes to stderr prefixed by its kind/namespace/name); 2 bad input; 1 the cluster "
      "state could not be read.\nResolves against --cluster FILE, or the live cluster of "
      "--kubeconfig exactly as the webhook does.");
  command
      ->add_option("-f,--filename", options->file,
                   "Manifest to inject: YAML or JSON, one or more documents, - for stdin. "
                   "Pods and the pod templates of Deployment, StatefulSet, DaemonSet, "
                   "ReplicaSet, ReplicationController, Job and CronJob are injected; "
                   "other kinds pass through")
      ->required();
  addClusterSourceOptions(*command, options->source);
  command
      ->add_option("-o,--output", options->output,
                   "Output format: yaml (documents separated by ---) or json (one object for "
                   "one document, a v1 List for several)")
      ->check(CLI::IsMember({"yaml", "json"}))
      ->capture_default_str();
  command
      ->add_option("-n,--namespace", options->namespace_name,
                   "Namespace of objects that do not name one (where their Binding is "
                   "looked up)")
      ->capture_default_str();
  command->callback([options] {
    const int code = runInject(*options);
    if (code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

}  // namespace kvc::cmd
