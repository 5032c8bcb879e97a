#pragma once
// ModelDeployment condition types, phases and Events that concern the shared cache (contract §8).
// Wire strings: product surface.

#include <string_view>

namespace kvc::api::model_deployment {

// Conditions and their reasons (policy/model_deployment_status.h says when each is written).
// DomainRegistered, QuotaReserved and CacheAttached are written only with spec.kvCache.
inline constexpr std::string_view kDomainRegistered = "DomainRegistered";
inline constexpr std::string_view kReasonRegistered = "Registered";
inline constexpr std::string_view kReasonNoTenantLedger = "NoTenantLedger";
inline constexpr std::string_view kReasonDomainNotRegistered = "DomainNotRegistered";

inline constexpr std::string_view kQuotaReserved = "QuotaReserved";
inline constexpr std::string_view kReasonGranted = "Granted";
inline constexpr std::string_view kReasonUnenforced = "Unenforced";
inline constexpr std::string_view kReasonZeroGranted = "ZeroGranted";
inline constexpr std::string_view kReasonGrantNotExported = "GrantNotExported";

// Shared by DomainRegistered, QuotaReserved and CacheAttached.
inline constexpr std::string_view kReasonBindingNotFound = "BindingNotFound";
inline constexpr std::string_view kReasonBindingDeleting = "BindingDeleting";
inline constexpr std::string_view kReasonDomainContested = "DomainContested";
inline constexpr std::string_view kReasonNotObserved = "NotObserved";

inline constexpr std::string_view kCacheAttached = "CacheAttached";
inline constexpr std::string_view kReasonAttached = "Attached";
inline constexpr std::string_view kReasonUnmanaged = "Unmanaged";
inline constexpr std::string_view kReasonRenderFailed = "RenderFailed";  // also ReplicasUpToDate
inline constexpr std::string_view kReasonPoolNotFound = "PoolNotFound";
inline constexpr std::string_view kReasonBackendNotFound = "BackendNotFound";
inline constexpr std::string_view kReasonLedgerNotAvailable = "LedgerNotAvailable";
inline constexpr std::string_view kReasonPoolUnreachable = "PoolUnreachable";
inline constexpr std::string_view kReasonTransportUnsupported = "TransportUnsupported";
inline constexpr std::string_view kReasonBindingNotResolved = "BindingNotResolved";
inline constexpr std::string_view kReasonNotAttached = "NotAttached";
// kReasonDomainNotRegistered, and (also ReplicasUpToDate) kReasonNotApplied.

inline constexpr std::string_view kReplicasUpToDate = "ReplicasUpToDate";
inline constexpr std::string_view kReasonUpToDate = "UpToDate";
inline constexpr std::string_view kReasonNotApplied = "NotApplied";
inline constexpr std::string_view kReasonRolloutInProgress = "RolloutInProgress";

inline constexpr std::string_view kRoleKindsReady = "RoleKindsReady";
inline constexpr std::string_view kReasonKindsReady = "KindsReady";
inline constexpr std::string_view kReasonKindNotReady = "KindNotReady";

// Not offered yet (no KV events publisher, no router is rendered): never written.
inline constexpr std::string_view kKVEventsPublishing = "KVEventsPublishing";
inline constexpr std::string_view kRouterReady = "RouterReady";

// The finalizer: a deployment holds its Binding (status.usedBy) until its engine Pods are gone.
inline constexpr std::string_view kFinalizer = "worker.gpustack.ai/model-deployment";

// Events.
inline constexpr std::string_view kEventReplicaEvicted = "ReplicaEvicted";
inline constexpr std::string_view kEventReplicaLeaving = "ReplicaLeaving";
inline constexpr std::string_view kEventReplicaRestarted = "ReplicaRestarted";
inline constexpr std::string_view kEventRuntimeVersionSkew = "RuntimeVersionSkew";
inline constexpr std::string_view kEventRenderFailed = "RenderFailed";

}  // namespace kvc::api::model_deployment
