#pragma once
// ModelDeployment condition types, phases and Events that concern the shared cache (contract §8).
// Wire strings: product surface.

#include <string_view>

namespace kvc::api::model_deployment {

inline constexpr std::string_view kDomainRegistered = "DomainRegistered";
inline constexpr std::string_view kQuotaReserved = "QuotaReserved";
inline constexpr std::string_view kCacheAttached = "CacheAttached";
inline constexpr std::string_view kReplicasUpToDate = "ReplicasUpToDate";
inline constexpr std::string_view kRoleKindsReady = "RoleKindsReady";
inline constexpr std::string_view kKVEventsPublishing = "KVEventsPublishing";
inline constexpr std::string_view kRouterReady = "RouterReady";

// Events.
inline constexpr std::string_view kEventReplicaEvicted = "ReplicaEvicted";
inline constexpr std::string_view kEventReplicaLeaving = "ReplicaLeaving";
inline constexpr std::string_view kEventReplicaRestarted = "ReplicaRestarted";
inline constexpr std::string_view kEventRuntimeVersionSkew = "RuntimeVersionSkew";
inline constexpr std::string_view kEventRenderFailed = "RenderFailed";

}  // namespace kvc::api::model_deployment
