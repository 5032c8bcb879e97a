#include "kvc/webhook/settings_cache.h"

#include <spdlog/spdlog.h>

namespace kvc::webhook {

SettingsCache::SettingsCache(const runtime::Cache& configMaps) : configMaps_(configMaps) {}

api::Settings SettingsCache::current() const {
  const runtime::ObjectPtr configMap = configMaps_.get(std::string(api::kOperatorNamespace) + "/" +
                                                       std::string(api::kSettingsConfigMap));
  const std::string version =
      configMap ? configMap->value(Json::json_pointer("/metadata/resourceVersion"), std::string())
                : std::string();
  std::lock_guard lock(mutex_);
  if (version == decodedVersion_) {
    return settings_;
  }
  decodedVersion_ = version;
  if (!configMap) {
    settings_ = api::Settings{};
    return settings_;
  }
  auto decoded = api::settingsFromConfigMap(*configMap);
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

}  // namespace kvc::webhook
