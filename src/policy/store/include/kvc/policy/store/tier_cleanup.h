#pragma once
// The disk tier's cleanup when a backend with `cleanAfterDelete: true` is deleted (contract
// §3.7): once every rendered workload is gone, one Pod per node the group selects runs
// `kvcache store clean` on the tier directory — the contents go, the directory stays — with a
// five-minute deadline, and reports `removed=N remaining=M` in its termination message. The
// controller reads the Pods back and records a Node Event for what did not go as planned:
//
//   KVCacheTierNotCleaned     the Pod failed, hit its deadline, or could not be created (no
//                             image: cleanup gives up at once)
//   KVCacheTierPartlyEmptied  it ran, but entries remain (M > 0, or the directory unreadable)
//   KVCacheTierSharedPath     the path equals, contains or lies inside another backend's tier
//                             on the same node: skipped, nothing removed
//
// The Pods carry a controller owner reference to the backend, so they go with it once its
// finalizer is removed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {

inline constexpr std::int64_t kTierCleanupDeadlineSeconds = 300;
inline constexpr std::string_view kEventTierNotCleaned = "KVCacheTierNotCleaned";
inline constexpr std::string_view kEventTierPartlyEmptied = "KVCacheTierPartlyEmptied";
inline constexpr std::string_view kEventTierSharedPath = "KVCacheTierSharedPath";

struct TierCleanupResult {
  std::int64_t removed = 0;
  std::int64_t remaining = -1;  // -1: the directory could not be read afterwards

  friend bool operator==(const TierCleanupResult&, const TierCleanupResult&) = default;
};

std::string formatTierCleanup(const TierCleanupResult& result);
// nullopt for a message that is not a cleanup result.
std::optional<TierCleanupResult> parseTierCleanup(std::string_view message);

// "component" label of the cleanup Pods of group i: "tier-clean-<i>".
std::string tierCleanupComponent(int group);

// The cleanup Pod of group `group` on `node`; FailedPrecondition when no image resolves.
Result<Json> tierCleanupPod(const api::KVCacheBackend& backend, int group, std::string_view node,
                            const StoreInputs& inputs);

// Two tier paths overlap: equal, or one lies inside the other (by whole components).
bool tierPathsOverlap(std::string_view a, std::string_view b);

// The label selector (k=v,…) of a group's nodeSelector, for listing the Nodes it selects.
std::string nodeSelectorQuery(const api::MemberGroup& group);

}  // namespace kvc::policy
