#include "kvc/policy/store/leader_handover.h"

namespace kvc::policy {

std::optional<std::string> leaderHandover(HandoverBaseline& baseline, const std::string& holder,
                                          std::int64_t lease_transitions) {
  if (holder.empty()) {
    return std::nullopt;
  }
  const bool handed_over = !baseline.holder.empty() && baseline.holder != holder;
  baseline.holder = holder;
  if (!handed_over) {
    return std::nullopt;
  }
  return "a standby took over the store's leadership (the Lease has changed hands " +
         std::to_string(lease_transitions) + (lease_transitions == 1 ? " time" : " times") +
         "); the new master rebuilds from the members' remounts, so the cache starts cold";
}

}  // namespace kvc::policy
