#pragma once
// Where `kvcache status` and `kvcache diagnose` read the cluster from: the live cluster of a
// kubeconfig (one paged list of each kind: backends, pools, Bindings, ModelDeployments, and the
// Pods carrying the inject label, 500 a page, each request bounded in time), or a recorded state
// (`--state FILE`: YAML/JSON documents or a kind: List of those kinds, as `kubectl get -o yaml`
// writes them).

#include <string>

#include "kvc/common/status.h"
#include "kvc/policy/observe/cluster_state.h"

namespace CLI {
class App;
}

namespace kvc::cmd {

struct ClusterStateOptions {
  std::string state_file;
  std::string kubeconfig;
  std::string context;
};

// Adds --state, --kubeconfig and --context (--state excludes the other two; without either, the
// default kubeconfig, as kubectl finds it: a kubectl plugin is called with no flags of ours).
void addClusterStateOptions(CLI::App& command, ClusterStateOptions& options);

// InvalidArgument for a bad file or kubeconfig (exit 2); another code when the live cluster could
// not be read (exit 1).
Result<policy::ClusterState> readClusterState(const ClusterStateOptions& options);

}  // namespace kvc::cmd
