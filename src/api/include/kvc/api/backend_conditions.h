#pragma once
// KVCacheBackend condition types and reasons (contract §2.6). Wire strings: product surface.

#include <string_view>

namespace kvc::api::backend {

// LeaderAvailable: can the master's admin API be read, and does it serve?
inline constexpr std::string_view kLeaderAvailable = "LeaderAvailable";
inline constexpr std::string_view kReasonNoAdminEndpoint = "NoAdminEndpoint";
inline constexpr std::string_view kReasonLeaderStarting = "LeaderStarting";
inline constexpr std::string_view kReasonLeaderUnreachable = "LeaderUnreachable";
inline constexpr std::string_view kReasonLeaderUnschedulable = "LeaderUnschedulable";
inline constexpr std::string_view kReasonLeaderCrashLooping = "LeaderCrashLooping";
inline constexpr std::string_view kReasonServicePlaneNotActive = "ServicePlaneNotActive";
inline constexpr std::string_view kReasonServing = "Serving";

// CapacityObserved: the capacity families for the medium were scraped.
inline constexpr std::string_view kCapacityObserved = "CapacityObserved";
inline constexpr std::string_view kReasonScrapeFailed = "ScrapeFailed";
inline constexpr std::string_view kReasonFamilyMissing = "FamilyMissing";
inline constexpr std::string_view kReasonObserved = "Observed";

// MembersMounted: the members' segments are registered with the master.
inline constexpr std::string_view kMembersMounted = "MembersMounted";
inline constexpr std::string_view kReasonPodsUnreadable = "PodsUnreadable";
inline constexpr std::string_view kReasonNoSegments = "NoSegments";
inline constexpr std::string_view kReasonAmbiguousMemberIdentity = "AmbiguousMemberIdentity";
inline constexpr std::string_view kReasonSegmentsShort = "SegmentsShort";
inline constexpr std::string_view kReasonUnschedulable = "Unschedulable";
inline constexpr std::string_view kReasonMemberInitCrashLooping = "MemberInitCrashLooping";
inline constexpr std::string_view kReasonMemberCrashLooping = "MemberCrashLooping";
inline constexpr std::string_view kReasonMounted = "Mounted";
inline constexpr std::string_view kReasonListingFailed = "ListingFailed";
inline constexpr std::string_view kReasonListingTooLarge = "ListingTooLarge";
inline constexpr std::string_view kReasonSegmentListingNotServed = "SegmentListingNotServed";
inline constexpr std::string_view kReasonLegacyMemberStatus = "LegacyMemberStatus";

// PoolWrites: has the store been seen to accept writes?
inline constexpr std::string_view kPoolWrites = "PoolWrites";
inline constexpr std::string_view kReasonReadFailed = "ReadFailed";
inline constexpr std::string_view kReasonWriteObserved = "WriteObserved";
inline constexpr std::string_view kReasonAllocationObserved = "AllocationObserved";
inline constexpr std::string_view kReasonAllocationMissing = "AllocationMissing";
inline constexpr std::string_view kReasonCountersMissing = "CountersMissing";
inline constexpr std::string_view kReasonNoWritesObserved = "NoWritesObserved";
inline constexpr std::string_view kReasonWritesRevoked = "WritesRevoked";
inline constexpr std::string_view kReasonWriteIncomplete = "WriteIncomplete";

// Deletable: may the backend go (no live pool uses it)?
inline constexpr std::string_view kDeletable = "Deletable";
inline constexpr std::string_view kReasonInUse = "InUse";
inline constexpr std::string_view kReasonUnused = "Unused";

// ElectionObserved (managed, electionBackend: Kubernetes).
inline constexpr std::string_view kElectionObserved = "ElectionObserved";
inline constexpr std::string_view kReasonLeaseUnreadable = "LeaseUnreadable";
inline constexpr std::string_view kReasonElecting = "Electing";
inline constexpr std::string_view kReasonNoHolder = "NoHolder";

// RolloutComplete (managed).
inline constexpr std::string_view kRolloutComplete = "RolloutComplete";
inline constexpr std::string_view kReasonWorkloadUnreadable = "WorkloadUnreadable";
inline constexpr std::string_view kReasonUpdateNotObserved = "UpdateNotObserved";
inline constexpr std::string_view kReasonReplicasPending = "ReplicasPending";
inline constexpr std::string_view kReasonComplete = "Complete";
inline constexpr std::string_view kReasonProgressing = "Progressing";

// TierWasEmpty (managed, with a disk tier; written once).
inline constexpr std::string_view kTierWasEmpty = "TierWasEmpty";
inline constexpr std::string_view kReasonEmpty = "Empty";
inline constexpr std::string_view kReasonPreexistingContent = "PreexistingContent";

// Events.
inline constexpr std::string_view kEventLeaderHandover = "KVCacheLeaderHandover";
inline constexpr std::string_view kEventTierNotEmpty = "KVCacheTierNotEmpty";
inline constexpr std::string_view kEventWorkloadNotTerminated = "KVCacheWorkloadNotTerminated";

// The finalizer that holds a backend while pools use it.
inline constexpr std::string_view kFinalizer = "worker.gpustack.ai/kvcache-backend";

}  // namespace kvc::api::backend
