#pragma once
// KVCachePool condition types and reasons (contract §4). Wire strings: product surface.

#include <string_view>

namespace kvc::api::pool {

inline constexpr std::string_view kBackendResolved = "BackendResolved";
inline constexpr std::string_view kReasonBackendNotSingular = "BackendNotSingular";
inline constexpr std::string_view kReasonBackendNotFound = "BackendNotFound";
inline constexpr std::string_view kReasonEndpointsNotPublished = "EndpointsNotPublished";
inline constexpr std::string_view kReasonResolved = "Resolved";

// The condition the Pod webhook gates injection on.
inline constexpr std::string_view kQuotaLedgerAvailable = "QuotaLedgerAvailable";
inline constexpr std::string_view kReasonAvailable = "Available";
inline constexpr std::string_view kReasonMultiTenancyDisabled = "MultiTenancyDisabled";
inline constexpr std::string_view kReasonLedgerUnreachable = "LedgerUnreachable";

inline constexpr std::string_view kQuotaPolicyWritable = "QuotaPolicyWritable";
inline constexpr std::string_view kReasonWritable = "Writable";
inline constexpr std::string_view kReasonQuotaPolicyNotWritable = "QuotaPolicyNotWritable";

inline constexpr std::string_view kQuotaWithinTotal = "QuotaWithinTotal";
inline constexpr std::string_view kReasonWithinTotal = "WithinTotal";
inline constexpr std::string_view kReasonOversubscribed = "Oversubscribed";

inline constexpr std::string_view kCapacityAllocatable = "CapacityAllocatable";
inline constexpr std::string_view kReasonCapacityNotObserved = "CapacityNotObserved";
inline constexpr std::string_view kReasonNothingToAllocate = "NothingToAllocate";
inline constexpr std::string_view kReasonAllocatable = "Allocatable";

// While deleting.
inline constexpr std::string_view kReleasable = "Releasable";
inline constexpr std::string_view kReasonHeldByBindings = "HeldByBindings";
inline constexpr std::string_view kReasonLedgerNotReleased = "LedgerNotReleased";

// The finalizer that holds a pool until its tenants left the ledger.
inline constexpr std::string_view kFinalizer = "worker.gpustack.ai/kvcache-pool";

}  // namespace kvc::api::pool
