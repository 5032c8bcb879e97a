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

}  // namespace

Result<SettingsDecode> settingsFromConfigMap(const Json& configMap) {
  SettingsDecode out;
  KVC_ASSIGN_OR_RETURN(Json data, optionalObject(configMap, "data", ""));
  for (const auto& [key, raw] : data.items()) {
    if (!raw.is_string()) {
      return invalidArgument("data[\"" + key + "\"] must be a string; quote the value");
    }
    const std::string value = raw.get<std::string>();
    if (key == kSettingBackendImage) {
      out.settings.kvCacheBackendImage = value;
    } else if (key == kSettingDtypeOwned) {
      KVC_ASSIGN_OR_RETURN(out.settings.kvCacheDtypeOwned, boolSetting(key, value));
    } else if (key == kSettingImagePullSecrets) {
      out.settings.imagePullSecrets = value;
    } else if (key == kSettingImagePullPolicy) {
      out.settings.imagePullPolicy = value;
    } else if (key == kSettingTcpTwReuse) {
      KVC_ASSIGN_OR_RETURN(out.settings.tcpTwReuse, boolSetting(key, value));
    } else {
      out.warnings.push_back("unknown Setting \"" + key + "\" is ignored");
    }
  }
  return out;
}

}  // namespace kvc::api
