#pragma once
// KVCachePoolBinding condition types and reasons (contract §5). Wire strings: product surface.

#include <string_view>

namespace kvc::api::binding {

inline constexpr std::string_view kDomainExclusive = "DomainExclusive";
inline constexpr std::string_view kReasonDomainClaimedByMultipleBindings =
    "DomainClaimedByMultipleBindings";
inline constexpr std::string_view kReasonExclusive = "Exclusive";

inline constexpr std::string_view kQuotaObserved = "QuotaObserved";
inline constexpr std::string_view kReasonObserved = "Observed";
inline constexpr std::string_view kReasonNoTenantLedger = "NoTenantLedger";
inline constexpr std::string_view kReasonTenantNotInLedger = "TenantNotInLedger";
inline constexpr std::string_view kReasonMasterNotScraped = "MasterNotScraped";

inline constexpr std::string_view kQuotaGranted = "QuotaGranted";
inline constexpr std::string_view kReasonGranted = "Granted";
inline constexpr std::string_view kReasonUnenforced = "Unenforced";
inline constexpr std::string_view kReasonNoLedgerEntry = "NoLedgerEntry";
inline constexpr std::string_view kReasonGrantNotExported = "GrantNotExported";
inline constexpr std::string_view kReasonZeroGranted = "ZeroGranted";

// While deleting.
inline constexpr std::string_view kReleasable = "Releasable";
inline constexpr std::string_view kReasonHeldByWorkloads = "HeldByWorkloads";
inline constexpr std::string_view kReasonLedgerNotReleased = "LedgerNotReleased";
inline constexpr std::string_view kReasonLedgerRequestFailed = "LedgerRequestFailed";

// The finalizer every live Binding carries before any write reaches the master.
inline constexpr std::string_view kFinalizer = "worker.gpustack.ai/kvcache-pool-binding";

}  // namespace kvc::api::binding
