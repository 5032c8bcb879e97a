#pragma once
// What a Binding's engines make of the cache (docs/observability.md): its hit rate, and its
// CacheUsed condition, the silent-zero alarm. Pure: the engine Pods as the reader last saw
// them and the tenant's holdings in, the figure and the verdict out.
//
// CacheUsed (beside DomainExclusive, QuotaObserved and QuotaGranted; a report, not a phase
// axis):
//   True/TenantHoldsData      the reuse domain holds bytes in the store
//   True/QueriesReported      it holds nothing now, but the engine Pods report lookups
//   Unknown/NoEnginePods      no Ready Pod is injected for the Binding
//   Unknown/AwaitingUse       Ready engine Pods, nothing cached, none Ready for the window yet
//   Unknown/UsageNotObserved  nothing reported, and the master reports no holdings to judge by
//   False/NothingCached       engine Pods Ready for the window (kv-cache-unused-after, 10 min)
//                             while the domain holds nothing and no Pod reports a lookup
// Messages carry no figure that moves with traffic, so that a busy cluster does not rewrite
// the condition each pass (the figures are status.usage and status.hitRate).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/condition.h"
#include "kvc/policy/usage/engine_counts.h"

namespace kvc::policy {

inline constexpr std::string_view kCacheUsed = "CacheUsed";
inline constexpr std::string_view kReasonTenantHoldsData = "TenantHoldsData";
inline constexpr std::string_view kReasonQueriesReported = "QueriesReported";
inline constexpr std::string_view kReasonNoEnginePods = "NoEnginePods";
inline constexpr std::string_view kReasonAwaitingUse = "AwaitingUse";
inline constexpr std::string_view kReasonUsageNotObserved = "UsageNotObserved";
inline constexpr std::string_view kReasonNothingCached = "NothingCached";
// The Event on each engine Pod when CacheUsed turns False.
inline constexpr std::string_view kEventReasonCacheUnused = "KVCacheUnused";

// One Ready engine Pod injected for the Binding (by the webhook, or a ModelDeployment role).
struct EnginePodUse {
  std::string name;    // the Pod's name (in the Binding's namespace)
  std::string engine;  // "vllm" | "sglang"
  std::int64_t ready_seconds = 0;
  // Its counters at the reader's last visit; absent when not read (reading is off, or the Pod
  // did not answer, or exports no such counter: `unread` says which).
  std::optional<EngineCounts> counts;
  std::string unread;
  // The reader has been to this Pod (since it last turned Ready, on this replica).
  bool visited = false;
};

struct BindingUse {
  bool reading = true;  // the Setting kv-cache-engine-metrics
  std::chrono::seconds unused_after{600};
  std::vector<EnginePodUse> pods;  // sorted by name
};

// Whether the reader has been to every Pod (or reads nothing). A Pod it has not reached yet — a
// Pod just Ready, or every Pod after a failover to a replica whose reader starts empty — would
// read as silent: until it has, a Binding's hitRate and CacheUsed stand as they were.
bool settled(const BindingUse& use);

// status.hitRate: Σ hits / Σ queries over the Pods read, in the contract's format (at most four
// decimals, "0", "0.8123", "1"), or nullopt when no Pod was read or none counted a query
// (absent is not zero).
std::optional<std::string> hitRate(const BindingUse& use);

// The hit rate of a ratio in [0, 1], rounded to four decimals, trailing zeros dropped.
std::string hitRateText(double ratio);

// CacheUsed for the reuse domain `domain` holding `holdings` bytes (nullopt: not observed).
api::Condition cacheUsed(const BindingUse& use, std::optional<std::int64_t> holdings,
                         std::string_view domain, std::string_view binding_namespace,
                         std::string_view binding_name);

// The Pods an Event is owed when CacheUsed turns False: those Ready for the window.
std::vector<const EnginePodUse*> unusedPods(const BindingUse& use);

// The note of that Event on `pod`: the likely causes, and the checks for its engine (the
// walkthrough's "Verify the vLLM file vehicle" command for vLLM).
std::string cacheUnusedNote(const EnginePodUse& pod, std::string_view domain,
                            std::string_view binding_namespace, std::string_view binding_name);

// "10m", "90s", "1h30m": a duration as the Setting spells it.
std::string durationText(std::chrono::seconds duration);

}  // namespace kvc::policy
