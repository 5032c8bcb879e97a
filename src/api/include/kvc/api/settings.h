#pragma once
// The cluster-wide Settings (DESIGN.md §5): the ConfigMap `gpustack-settings` in the operator
// namespace, one key per Setting, an absent key meaning the built-in default.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::api {

inline constexpr std::string_view kOperatorNamespace = "gpustack-system";
inline constexpr std::string_view kSettingsConfigMap = "gpustack-settings";

inline constexpr std::string_view kSettingBackendImage = "kv-cache-backend-image";
inline constexpr std::string_view kSettingDtypeOwned = "model-deployment-kv-cache-dtype-owned";
inline constexpr std::string_view kSettingImagePullSecrets = "image-pull-secrets";
inline constexpr std::string_view kSettingImagePullPolicy = "image-pull-policy";
inline constexpr std::string_view kSettingTcpTwReuse = "model-deployment-tcp-tw-reuse";
inline constexpr std::string_view kSettingStoreMetricsIdentity = "kv-cache-store-metrics-identity";
inline constexpr std::string_view kSettingLeaderLease = "kv-cache-leader-lease-duration";

// The managed store's leader Lease (policy/store/leader_timing.h derives the rest from it): whole
// seconds, "4s" by default. Mooncake's own Kubernetes coordinator uses 5 s.
inline constexpr std::chrono::seconds kDefaultLeaderLease{4};
inline constexpr std::chrono::seconds kMinLeaderLease{2};
inline constexpr std::chrono::seconds kMaxLeaderLease{60};

// This project's store image (images/store, KVC_STORE_IMAGE in images/versions.env): the pinned
// Mooncake wheel plus `kvcache store leader|member|survey`, which does the Lease election.
inline constexpr std::string_view kDefaultBackendImage = "kvcache-operator/store:0.3.13.post1-cpu";

struct Settings {
  std::string kv_cache_backend_image = std::string(kDefaultBackendImage);
  // Render the Binding's dtype as --kv-cache-dtype and refuse the user's own flag.
  bool kv_cache_dtype_owned = true;
  std::string image_pull_secrets;
  std::string image_pull_policy = "IfNotPresent";
  bool tcp_tw_reuse = false;
  // The common name of the scraper's client certificate for the stores' admin API (Secret
  // kvcache-store-metrics-client; docs/security.md).
  std::string store_metrics_identity = "kvcache-store-metrics";
  // How fast a managed store fails over, and how long an API-server outage its leader survives
  // (a renew deadline of 3/4 of it): kv-cache-leader-lease-duration.
  std::chrono::seconds leader_lease = kDefaultLeaderLease;
};

struct SettingsDecode {
  Settings settings;
  std::vector<std::string> warnings;  // unknown keys, kept for the operator to report
};

// Reads the ConfigMap's `data`. A key outside the catalogue is a warning; a malformed value
// (a boolean Setting that is not "true" or "false") is InvalidArgument naming the key.
Result<SettingsDecode> settingsFromConfigMap(const Json& config_map);

}  // namespace kvc::api
