#pragma once
// The names the injection contract fixes: the label, the annotations, the volume, the mount and
// the variables (seed "KV Cache Injection Reference"; contract §7.1, §7.5).

#include <string_view>

namespace kvc::policy {

inline constexpr std::string_view kKeyPrefix = "kvcache.gpustack.ai/";

// The opt-in: a label, because a webhook's objectSelector can match only labels.
inline constexpr std::string_view kLabelInject = "kvcache.gpustack.ai/inject";

// Annotations the author writes.
inline constexpr std::string_view kAnnotationBinding = "kvcache.gpustack.ai/binding";
inline constexpr std::string_view kAnnotationEngine = "kvcache.gpustack.ai/engine";
inline constexpr std::string_view kAnnotationManufacturer = "kvcache.gpustack.ai/manufacturer";
inline constexpr std::string_view kAnnotationRole = "kvcache.gpustack.ai/role";
inline constexpr std::string_view kAnnotationContainer = "kvcache.gpustack.ai/container";
inline constexpr std::string_view kAnnotationForwarded =
    "kvcache.gpustack.ai/launch-args-forwarded";

// Annotations only the webhook writes.
inline constexpr std::string_view kAnnotationClientConfig = "kvcache.gpustack.ai/client-config";
inline constexpr std::string_view kAnnotationInjected = "kvcache.gpustack.ai/injected";

// Deliberately not accepted: the reuse domain comes from the Binding.
inline constexpr std::string_view kAnnotationDomain = "kvcache.gpustack.ai/domain";

// The vLLM file vehicle.
inline constexpr std::string_view kVolumeName = "gpustack-kvcache-config";
inline constexpr std::string_view kMountPath = "/etc/gpustack/kvcache";
inline constexpr std::string_view kConfigFileName = "mooncake.json";
inline constexpr std::string_view kConfigFilePath = "/etc/gpustack/kvcache/mooncake.json";

// Constants written on every path.
inline constexpr std::string_view kMetadataServer = "P2PHANDSHAKE";
inline constexpr std::string_view kStandaloneStoreMode = "standalone-store";
inline constexpr long long kGlobalSegmentSize = 0;
inline constexpr long long kLocalBufferSize = 134217728;  // 128 MiB, vLLM family only

// The pool condition that gates injection is api::pool::kQuotaLedgerAvailable
// (api/pool_conditions.h).

}  // namespace kvc::policy
