#include "kvc/runtime/settings_cache.h"

#include <spdlog/spdlog.h>

#include "kvc/kube/resource.h"

namespace kvc::runtime {

InformerOptions settingsInformerOptions() {
  InformerOptions options;
  options.resource = kube::resources::configMaps();
  options.namespace_name = std::string(api::kOperatorNamespace);
  options.field_selector = "metadata.name=" + std::string(api::kSettingsConfigMap);
  return options;
}

SettingsCache::SettingsCache(const runtime::Cache& config_maps) : config_maps_(config_maps) {}

api::Settings SettingsCache::current() const {
  const runtime::ObjectPtr config_map = config_maps_.get(
      std::string(api::kOperatorNamespace) + "/" + std::string(api::kSettingsConfigMap));
  const std::string version =
      config_map ? config_map->value(Json::json_pointer("/metadata/resourceVersion"), std::string())
                 : std::string();
  std::lock_guard lock(mutex_);
  if (version == decoded_version_) {
    return settings_;
  }
  decoded_version_ = version;
  if (!config_map) {
    settings_ = api::Settings{};
    return settings_;
  }
  auto decoded = api::settingsFromConfigMap(*config_map);
  if (!decoded.ok()) {
    spdlog::warn("ignoring ConfigMap {}/{} version {}: {}; keeping the previous Settings",
                 api::kOperatorNamespace, api::kSettingsConfigMap, version,
                 decoded.status().message());
    return settings_;
  }
  for (const std::string& warning : decoded->warnings) {
    spdlog::warn("ConfigMap {}/{}: {}", api::kOperatorNamespace, api::kSettingsConfigMap, warning);
  }
  settings_ = decoded->settings;
  return settings_;
}

}  // namespace kvc::runtime
