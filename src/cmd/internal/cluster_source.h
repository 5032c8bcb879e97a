#pragma once
// Where the offline commands read the cluster from: a cluster file (`--cluster`), or the live
// cluster of a kubeconfig (`--kubeconfig`, `--context`), resolved exactly as the webhook does:
// the Binding, pool and backend read from the API server, the Settings from the
// gpustack-settings ConfigMap.

#include <memory>
#include <string>
#include <vector>

#include "kvc/api/settings.h"
#include "kvc/common/status.h"
#include "kvc/policy/inject/cluster_view.h"

namespace CLI {
class App;
}

namespace kvc::cmd {

struct ClusterSourceOptions {
  std::string cluster_file;
  std::string kubeconfig;
  std::string context;
};

// Adds --cluster, --kubeconfig and --context to a command (exactly one source is required).
void addClusterSourceOptions(CLI::App& command, ClusterSourceOptions& options);

struct ClusterSource {
  std::shared_ptr<const policy::ClusterView> view;
  api::Settings settings;
  std::vector<std::string> warnings;
};

// InvalidArgument for a bad cluster file or kubeconfig (exit 2); another code when the live
// cluster could not be read (exit 1).
Result<ClusterSource> openClusterSource(const ClusterSourceOptions& options);

}  // namespace kvc::cmd
