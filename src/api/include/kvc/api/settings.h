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
inline constexpr std::string_view kSettingEngineMetrics = "kv-cache-engine-metrics";
inline constexpr std::string_view kSettingUnusedAfter = "kv-cache-unused-after";

// The managed store's leader Lease (policy/store/leader_timing.h derives the rest from it): whole
// seconds, "4s" by default. Mooncake's own Kubernetes coordinator uses 5 s.
inline constexpr std::chrono::seconds kDefaultLeaderLease{4};
inline constexpr std::chrono::seconds kMinLeaderLease{2};
inline constexpr std::chrono::seconds kMaxLeaderLease{60};

// How long a Binding's injected Pods may be Ready with nothing cached before its CacheUsed
// condition turns False: "<n>s", "<n>m" or "<n>h", 10 s to 24 h.
inline constexpr std::chrono::seconds kDefaultUnusedAfter{600};
inline constexpr std::chrono::seconds kMinUnusedAfter{10};
inline constexpr std::chrono::seconds kMaxUnusedAfter{24 * 3600};

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
  // Read the hit and query counters the engines of injected Pods export (a Binding's
  // status.hitRate and CacheUsed; docs/observability.md): kv-cache-engine-metrics.
  bool engine_metrics = true;
  // kv-cache-unused-after.
  std::chrono::seconds unused_after = kDefaultUnusedAfter;
};

struct SettingsDecode {
  Settings settings;
  std::vector<std::string> warnings;  // unknown keys, kept for the operator to report
};

// Reads the ConfigMap's `data`. A key outside the catalogue is a warning; a malformed value
// (a boolean Setting that is not "true" or "false") is InvalidArgument naming the key.
Result<SettingsDecode> settingsFromConfigMap(const Json& config_map);

}  // namespace kvc::api
