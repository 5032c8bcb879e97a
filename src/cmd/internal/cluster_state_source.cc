#include "internal/cluster_state_source.h"

#include <CLI/CLI.hpp>

#include "internal/manifest.h"
#include "kvc/kube/client.h"
#include "kvc/kube/config.h"
#include "kvc/kube/resource.h"
#include "kvc/policy/inject/keys.h"

namespace kvc::cmd {
namespace {

constexpr std::chrono::milliseconds kRequestTimeout{10000};
constexpr std::int64_t kPageSize = 500;

Result<std::vector<Json>> listAll(const kube::ClientPtr& client, const kube::ResourceType& type,
                                  std::string label_selector = {}) {
  kube::ListParams params;
  params.label_selector = std::move(label_selector);
  auto list = kube::Api(client, type, "").withTimeout(kRequestTimeout).listAll(params, kPageSize);
  if (!list.ok()) {
    return list.status().withContext("listing " + type.plural);
  }
  return std::move(list->items);
}

Result<policy::ClusterState> fromCluster(const ClusterStateOptions& options) {
  kube::LoadOptions load;
  load.context = options.context;
  auto config = kube::loadDefaultConfig(options.kubeconfig, load);
  if (!config.ok()) {
    return invalidArgument(config.status().message());
  }
  KVC_ASSIGN_OR_RETURN(kube::ClientPtr client, kube::Client::create(*config));
  policy::ClusterState state;
  KVC_ASSIGN_OR_RETURN(state.backends, listAll(client, kube::resources::kvCacheBackends()));
  KVC_ASSIGN_OR_RETURN(state.pools, listAll(client, kube::resources::kvCachePools()));
  KVC_ASSIGN_OR_RETURN(state.bindings, listAll(client, kube::resources::kvCachePoolBindings()));
  KVC_ASSIGN_OR_RETURN(state.model_deployments,
                       listAll(client, kube::resources::modelDeployments()));
  KVC_ASSIGN_OR_RETURN(state.pods, listAll(client, kube::resources::pods(),
                                           std::string(policy::kLabelInject) + "=true"));
  return policy::normalizedState(std::move(state));
}

Result<policy::ClusterState> fromFile(const std::string& path) {
  KVC_ASSIGN_OR_RETURN(std::vector<YamlDocument> documents, loadManifest(path));
  std::vector<Json> objects;
  for (YamlDocument& document : documents) {
    if (!document.value.is_null()) {
      objects.push_back(std::move(document.value));
    }
  }
  auto state = policy::clusterStateFromObjects(objects);
  if (!state.ok()) {
    return invalidArgument(path + ": " + state.status().message());
  }
  return state;
}

}  // namespace

void addClusterStateOptions(CLI::App& command, ClusterStateOptions& options) {
  auto* state = command.add_option(
      "--state", options.state_file,
      "Read a recorded state instead of a cluster: YAML/JSON documents or a kind: List of "
      "KVCacheBackend, KVCachePool, KVCachePoolBinding, ModelDeployment and Pod objects with "
      "their status (kubectl get -o yaml writes them)");
  state->check(CLI::ExistingFile);
  auto* kubeconfig = command.add_option(
      "--kubeconfig", options.kubeconfig,
      "Read the live cluster of this kubeconfig (default: $KUBECONFIG, in a Pod its service "
      "account, else ~/.kube/config)");
  auto* context =
      command.add_option("--context", options.context, "kubeconfig context (default: current)");
  state->excludes(kubeconfig);
  state->excludes(context);
}

Result<policy::ClusterState> readClusterState(const ClusterStateOptions& options) {
  if (!options.state_file.empty()) {
    return fromFile(options.state_file);
  }
  return fromCluster(options);
}

}  // namespace kvc::cmd
