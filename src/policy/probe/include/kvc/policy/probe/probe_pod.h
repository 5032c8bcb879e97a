#pragma once
// The Pod of one probe replica (`kvcache probe`, docs/observability.md). It is opted into injection
// on the Binding exactly as an engine is (the inject label, the binding and engine annotations), so
// the webhook writes the same client configuration it writes for that engine: the vLLM file or the
// SGLang environment. Its launcher is `python3 -c SCRIPT`, which ignores the engine arguments the
// webhook appends, so it declares launch-args-forwarded. It runs once (restartPolicy Never, an
// active deadline), as the store image's unprivileged user, and reports its result on the
// termination log.

#include <map>
#include <string>

#include "kvc/common/json.h"
#include "kvc/policy/inject/engine.h"

namespace kvc::policy {

// The label every probe Pod carries, and the one naming its run (for cleanup and listing).
inline constexpr std::string_view kProbeAppName = "kvcache-probe";
inline constexpr std::string_view kLabelProbeRun = "kvcache.gpustack.ai/probe-run";

// What one replica does: `prompts` prompts of `prefix_blocks` blocks every replica shares, then
// `suffix_blocks` of its own; `block_tokens` tokens a block (the Binding's domain.blockSize) and
// `block_bytes` bytes of KV a block.
struct ProbeWorkload {
  std::string seed;
  std::string model = "kvcache-probe";
  int prompts = 8;
  int prefix_blocks = 8;
  int suffix_blocks = 2;
  int block_tokens = 0;  // 0: the Binding's domain.blockSize
  long long block_bytes = 64 * 1024;
  int deadline_seconds = 90;
  // After its run, each replica serves its counters on the engine's metrics port (vLLM 8000,
  // SGLang 30000) for this long, as an engine would: what the operator's counter reader reads
  // into the Binding's status.hitRate. 0: it exits at once.
  int serve_seconds = 0;
};

struct ProbePodSpec {
  std::string namespace_name;
  std::string binding;
  std::string run;  // this invocation's id: part of every Pod name
  int replica = 1;  // 1-based
  // The run's last Pod: removes every block the run's `replicas` wrote, instead of probing.
  bool clean = false;
  int replicas = 1;
  Engine engine = Engine::VLLM;
  std::string image;
  std::string pull_policy = "IfNotPresent";
  std::map<std::string, std::string> node_selector;
  ProbeWorkload workload;
  std::string script;  // the replica's Python program
};

// "kvcache-probe-<run>-<replica>", and "kvcache-probe-<run>-clean" for the cleanup.
std::string probePodName(const std::string& run, int replica);
std::string probeCleanupPodName(const std::string& run);

Json renderProbePod(const ProbePodSpec& spec);

}  // namespace kvc::policy
