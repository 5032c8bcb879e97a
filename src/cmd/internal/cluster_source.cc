#include "internal/cluster_source.h"

#include <CLI/CLI.hpp>

#include "internal/cluster_file.h"
#include "kvc/kube/client.h"
#include "kvc/kube/config.h"
#include "kvc/kube/resource.h"
#include "kvc/webhook/live_cluster_view.h"

namespace kvc::cmd {
namespace {

constexpr std::chrono::milliseconds kLiveReadTimeout{5000};

Result<ClusterSource> fromFile(const std::string& path) {
  KVC_ASSIGN_OR_RETURN(ClusterFile file, loadClusterFile(path));
  ClusterSource source;
  source.view = std::make_shared<policy::ClusterSnapshot>(std::move(file.snapshot));
  source.settings = file.settings;
  source.warnings = std::move(file.warnings);
  return source;
}

Result<ClusterSource> fromCluster(const ClusterSourceOptions& options) {
  kube::LoadOptions load;
  load.context = options.context;
  auto config = kube::loadKubeconfig(options.kubeconfig, load);
  if (!config.ok()) {
    return invalidArgument(config.status().message());
  }
  config->timeout = kLiveReadTimeout;
  KVC_ASSIGN_OR_RETURN(kube::ClientPtr client, kube::Client::create(*config));
  ClusterSource source;
  source.view = std::make_shared<webhook::LiveClusterView>(client, nullptr, nullptr, nullptr,
                                                           kLiveReadTimeout);
  const kube::Api config_maps(client, kube::resources::configMaps(),
                              std::string(api::kOperatorNamespace));
  auto config_map = config_maps.getOptional(api::kSettingsConfigMap);
  if (!config_map.ok()) {
    return config_map.status().withContext("reading ConfigMap " +
                                           std::string(api::kOperatorNamespace) + "/" +
                                           std::string(api::kSettingsConfigMap));
  }
  if (config_map->has_value()) {
    auto settings = api::settingsFromConfigMap(**config_map);
    if (!settings.ok()) {
      return settings.status();
    }
    source.settings = settings->settings;
    source.warnings = settings->warnings;
  }
  return source;
}

}  // namespace

void addClusterSourceOptions(CLI::App& command, ClusterSourceOptions& options) {
  auto* cluster = command.add_option(
      "--cluster", options.cluster_file,
      "Resolve against a file instead of a cluster: YAML/JSON documents (or a kind: List) with "
      "KVCacheBackend, KVCachePool and KVCachePoolBinding objects and their status, and "
      "optionally the gpustack-settings ConfigMap");
  cluster->check(CLI::ExistingFile);
  auto* kubeconfig = command.add_option(
      "--kubeconfig", options.kubeconfig,
      "Resolve against the live cluster of this kubeconfig, exactly as the webhook does");
  command.add_option("--context", options.context, "kubeconfig context (default: current)")
      ->needs(kubeconfig);
  cluster->excludes(kubeconfig);
}

Result<ClusterSource> openClusterSource(const ClusterSourceOptions& options) {
  if (!options.cluster_file.empty()) {
    return fromFile(options.cluster_file);
  }
  if (!options.kubeconfig.empty()) {
    return fromCluster(options);
  }
  return invalidArgument(
      "name the cluster to resolve against: --cluster FILE or --kubeconfig "
      "PATH");
}

}  // namespace kvc::cmd
