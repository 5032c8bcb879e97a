#pragma once
// The I/O of `kvcache probe`: reads the Binding and the Settings, starts the probe Pods (the first
// replica alone, so that it writes what the others then read; the rest together), waits for each
// one's result on its termination log, bounded in time, then one more Pod that removes every block
// the run wrote (they would count against the tenant's quota and hold the Binding's deletion),
// and deletes them all. The decisions (the Pod,
// the result, the messages, the report) are policy::probe's.

#include <chrono>
#include <iosfwd>
#include <map>
#include <string>

#include "kvc/common/status.h"
#include "kvc/kube/client.h"
#include "kvc/policy/inject/engine.h"
#include "kvc/policy/probe/probe_pod.h"
#include "kvc/policy/probe/probe_report.h"

namespace kvc::cmd {

struct ProbeRunOptions {
  std::string namespace_name;
  std::string binding;
  policy::Engine engine = policy::Engine::VLLM;
  int replicas = 2;
  std::string image;  // "" = the Setting kv-cache-backend-image (this project's store image)
  std::map<std::string, std::string> node_selector;
  policy::ProbeWorkload workload;           // block_tokens 0 = the Binding's domain.blockSize
  std::chrono::seconds start_timeout{120};  // for a Pod to start and report, past its deadline
  bool keep = false;                        // leave the Pods for inspection
  bool keep_blocks = false;                 // leave the blocks the probes wrote in the store
};

// InvalidArgument when the Binding does not exist or the options are unusable (exit 2); another
// code when the cluster could not be read (exit 1). A probe that could not use the store is in the
// report, not an error.
Result<policy::ProbeReport> runProbe(const kube::ClientPtr& client, ProbeRunOptions options,
                                     std::ostream& progress);

}  // namespace kvc::cmd
