#include "kvc/api/settings.h"

#include "kvc/api/decode.h"

namespace kvc::api {
namespace {

Result<bool> boolSetting(std::string_view key, const std::string& value) {
  if (value == "true") {
    return true;
  }
  if (value == "false") {
    return false;
  }
  return invalidArgument("Setting " + std::string(key) + " is \"" + value +
                         "\"; set it to \"true\" or \"false\" in ConfigMap " +
                         std::string(kOperatorNamespace) + "/" + std::string(kSettingsConfigMap));
}

// "4s": whole seconds within [kMinLeaderLease, kMaxLeaderLease].
Result<std::chrono::seconds> leaseSetting(std::string_view key, const std::string& value) {
  const bool digits = value.size() >= 2 && value.size() <= 4 && value.back() == 's' &&
                      value.find_first_not_of("0123456789") == value.size() - 1;
  const long seconds = digits ? std::stol(value.substr(0, value.size() - 1)) : 0;
  if (seconds < kMinLeaderLease.count() || seconds > kMaxLeaderLease.count()) {
    return invalidArgument(
        "Setting " + std::string(key) + " is \"" + value + "\"; set it to whole seconds from " +
        std::to_string(kMinLeaderLease.count()) + "s to " +
        std::to_string(kMaxLeaderLease.count()) + "s (e.g. \"4s\") in ConfigMap " +
        std::string(kOperatorNamespace) + "/" + std::string(kSettingsConfigMap));
  }
  return std::chrono::seconds(seconds);
}

// "90s", "10m", "1h": a whole number of one unit within [kMinUnusedAfter, kMaxUnusedAfter].
Result<std::chrono::seconds> unusedAfterSetting(std::string_view key, const std::string& value) {
  long seconds = 0;
  const bool digits = value.size() >= 2 && value.size() <= 6 &&
                      value.find_first_not_of("0123456789") == value.size() - 1;
  if (digits) {
    const long n = std::stol(value.substr(0, value.size() - 1));
    switch (value.back()) {
      case 's':
        seconds = n;
        break;
      case 'm':
        seconds = n * 60;
        break;
      case 'h':
        seconds = n * 3600;
        break;
      default:
        break;
    }
  }
  if (seconds < kMinUnusedAfter.count() || seconds > kMaxUnusedAfter.count()) {
    return invalidArgument("Setting " + std::string(key) + " is \"" + value +
                           "\"; set it to a whole number of seconds, minutes or hours from 10s "
                           "to 24h (e.g. \"10m\") in ConfigMap " +
                           std::string(kOperatorNamespace) + "/" + std::string(kSettingsConfigMap));
  }
  return std::chrono::seconds(seconds);
}

}  // namespace

Result<SettingsDecode> settingsFromConfigMap(const Json& config_map) {
  SettingsDecode out;
  KVC_ASSIGN_OR_RETURN(Json data, optionalObject(config_map, "data", ""));
  for (const auto& [key, raw] : data.items()) {
    if (!raw.is_string()) {
      return invalidArgument("data[\"" + key + "\"] must be a string; quote the value");
    }
    const std::string value = raw.get<std::string>();
    if (key == kSettingBackendImage) {
      out.settings.kv_cache_backend_image = value;
    } else if (key == kSettingDtypeOwned) {
      KVC_ASSIGN_OR_RETURN(out.settings.kv_cache_dtype_owned, boolSetting(key, value));
    } else if (key == kSettingImagePullSecrets) {
      out.settings.image_pull_secrets = value;
    } else if (key == kSettingImagePullPolicy) {
      out.settings.image_pull_policy = value;
    } else if (key == kSettingTcpTwReuse) {
      KVC_ASSIGN_OR_RETURN(out.settings.tcp_tw_reuse, boolSetting(key, value));
    } else if (key == kSettingStoreMetricsIdentity) {
      if (value.empty()) {
        return invalidArgument("Setting " + key +
                               " is empty; name the scraper (a certificate "
                               "common name) in ConfigMap " +
                               std::string(kOperatorNamespace) + "/" +
                               std::string(kSettingsConfigMap) + ", or remove the key");
      }
      out.settings.store_metrics_identity = value;
    } else if (key == kSettingLeaderLease) {
      KVC_ASSIGN_OR_RETURN(out.settings.leader_lease, leaseSetting(key, value));
    } else if (key == kSettingEngineMetrics) {
      KVC_ASSIGN_OR_RETURN(out.settings.engine_metrics, boolSetting(key, value));
    } else if (key == kSettingUnusedAfter) {
      KVC_ASSIGN_OR_RETURN(out.settings.unused_after, unusedAfterSetting(key, value));
    } else {
      out.warnings.push_back("unknown Setting \"" + key + "\" is ignored");
    }
  }
  return out;
}

}  // namespace kvc::api
