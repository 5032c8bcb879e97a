// kvcache probe: show, through the real store, that replicas on a Binding reuse each other's
// blocks (docs/observability.md, "The reuse probe").
#include <iostream>
#include <random>

#include "internal/probe_run.h"
#include "kvc/cmd/commands.h"
#include "kvc/kube/config.h"

namespace kvc::cmd {
namespace {

struct ProbeOptions {
  std::string kubeconfig;
  std::string context;
  std::string namespace_name = "default";
  std::string engine = "vLLM";
  std::string output;
  std::vector<std::string> node_selector;
  int start_timeout_seconds = 120;
  ProbeRunOptions run;
};

Result<std::map<std::string, std::string>> parseSelector(const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> selector;
  for (const std::string& pair : pairs) {
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      return invalidArgument("--node-selector '" + pair + "' is not KEY=VALUE (type=real, say)");
    }
    selector[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return selector;
}

int runProbeCommand(ProbeOptions& options) {
  const bool json = options.output == "json";
  options.run.engine = options.engine == "SGLang" ? policy::Engine::SGLang : policy::Engine::VLLM;
  options.run.namespace_name = options.namespace_name;
  options.run.start_timeout = std::chrono::seconds(options.start_timeout_seconds);
  auto selector = parseSelector(options.node_selector);
  if (!selector.ok()) {
    std::cerr << "kvcache probe: " << selector.status().message() << "\n";
    return kExitBadInput;
  }
  options.run.node_selector = *selector;
  kube::LoadOptions load;
  load.context = options.context;
  auto config = kube::loadDefaultConfig(options.kubeconfig, load);
  if (!config.ok()) {
    std::cerr << "kvcache probe: " << config.status().message() << "\n";
    return kExitBadInput;
  }
  auto client = kube::Client::create(*config);
  if (!client.ok()) {
    std::cerr << "kvcache probe: " << client.status().message() << "\n";
    return kExitFailure;
  }
  // Progress goes to stderr, so that -o json's stdout is the report alone.
  auto report = runProbe(*client, options.run, std::cerr);
  if (!report.ok()) {
    std::cerr << "kvcache probe: " << report.status().message() << "\n";
    return report.status().code() == StatusCode::InvalidArgument ? kExitBadInput : kExitFailure;
  }
  if (json) {
    std::cout << policy::probeReportJson(*report).dump(2) << "\n";
  } else {
    std::cout << policy::probeReportTable(*report);
  }
  return report->ok() ? kExitOk : kExitRefused;
}

}  // namespace

void addProbeCommand(CLI::App& app) {
  auto options = std::make_shared<ProbeOptions>();
  CLI::App* command = app.add_subcommand(
      "probe",
      "Show, through the real store, that replicas on a Binding reuse each other's blocks. Starts "
      "probe Pods in the namespace, opted into injection on the Binding as an engine is (the "
      "webhook configures them exactly as it configures that engine); each uses the store's own "
      "Python client, configured only by what was injected, and does what the engine's store "
      "connector does for a stream of prompts sharing a prefix: chains block hashes under the "
      "engine's key layout, looks the blocks up, reads the hits and writes the misses. The first "
      "replica runs alone, then the others together, so they read what it wrote. Prints each "
      "probe's blocks looked up, written and read, its hit ratio, put/get latency and throughput, "
      "and for a probe that could not use the store, why. A last Pod removes the blocks the run "
      "wrote; "
      "every Pod is deleted afterwards.\n"
      "Exit codes: 0 every probe could use the store; 3 a probe could not (the report says why); "
      "2 bad input (no such Binding, bad flags); 1 the cluster could not be read.");
  command->add_option("-n,--namespace", options->namespace_name, "Namespace of the Binding")
      ->capture_default_str();
  command->add_option("--binding", options->run.binding, "The KVCachePoolBinding to probe")
      ->required();
  command
      ->add_option("--engine", options->engine,
                   "Whose injection, key layout and counters the probes use")
      ->check(CLI::IsMember({"vLLM", "SGLang"}))
      ->capture_default_str();
  command->add_option("--replicas", options->run.replicas, "Probe Pods (the first runs alone)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  command->add_option("-o,--output", options->output, "Output format: json (default: a table)")
      ->check(CLI::IsMember({"json"}));
  command->add_option("--kubeconfig", options->kubeconfig,
                      "kubeconfig of the cluster (default: $KUBECONFIG, in a Pod its service "
                      "account, else ~/.kube/config)");
  command->add_option("--context", options->context, "kubeconfig context (default: current)");
  command->add_option("--image", options->run.image,
                      "Image of the probe Pods: one with the store's Python client (default: the "
                      "Setting kv-cache-backend-image, this project's store image)");
  command->add_option("--node-selector", options->node_selector,
                      "KEY=VALUE the probe Pods' nodes must carry (repeatable)");
  command->add_option(
      "--seed", options->run.workload.seed,
      "Seed of the prompts' token ids (default: this run's id). Probes that share a "
      "seed and a model share their prefix blocks, across runs too");
  command->add_option("--model", options->run.workload.model, "Model name in the block keys")
      ->capture_default_str();
  command->add_option("--prompts", options->run.workload.prompts, "Prompts a probe")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command
      ->add_option("--prefix-blocks", options->run.workload.prefix_blocks,
                   "Blocks of the prefix every prompt of every probe shares")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command
      ->add_option("--suffix-blocks", options->run.workload.suffix_blocks,
                   "Blocks of each prompt's own suffix")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  command
      ->add_option("--block-tokens", options->run.workload.block_tokens,
                   "Tokens a block (default: the Binding's domain.blockSize)")
      ->check(CLI::Range(1, 65536));
  command->add_option("--block-bytes", options->run.workload.block_bytes, "Bytes of KV a block")
      ->check(CLI::Range(1LL, 64LL << 20))
      ->capture_default_str();
  command
      ->add_option("--deadline", options->run.workload.deadline_seconds,
                   "Seconds a probe may take to use the store before it reports it stalled")
      ->check(CLI::Range(5, 3600))
      ->capture_default_str();
  command
      ->add_option("--start-timeout", options->start_timeout_seconds,
                   "Seconds past the deadline a probe Pod may take to start and report")
      ->check(CLI::Range(5, 3600))
      ->capture_default_str();
  command
      ->add_option("--serve-metrics", options->run.workload.serve_seconds,
                   "Seconds each probe serves its counters after its run, on the engine's metrics "
                   "port (vLLM 8000, SGLang 30000), as an engine would: the operator reads them "
                   "into the Binding's status.hitRate. The run takes that much longer a wave")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  command->add_flag("--keep", options->run.keep, "Leave the probe Pods for inspection");
  command->add_flag("--keep-blocks", options->run.keep_blocks,
                    "Leave the blocks the probes wrote in the store (by default a last Pod removes "
                    "them: they count against the Binding's quota, and its deletion waits for "
                    "them). A later run with the same --seed then finds them");
  command->callback([options] {
    const int code = runProbeCommand(*options);
    if (code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

}  // namespace kvc::cmd
