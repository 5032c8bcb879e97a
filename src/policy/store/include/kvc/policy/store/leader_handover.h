#pragma once
// The KVCacheLeaderHandover Event of a managed backend (contract §2.8): the Lease `<b>-leader`
// moved from one holder to another. The first holder seen is only a baseline (an operator that
// starts, or a backend that is new, reports no handover), a Lease without a holder changes
// nothing (the last non-empty holder stays the baseline), and a Lease that disappears is
// forgotten. The message gives leaseTransitions and names no replica: Pod names of a
// Deployment are noise to the reader, and the holder is in the Lease for whoever wants it.

#include <cstdint>
#include <optional>
#include <string>

namespace kvc::policy {

struct HandoverBaseline {
  std::string holder;  // the last non-empty holder seen; "" before the first sighting
};

// Updates `baseline` with what the Lease now says and returns the Event's message when the
// holder changed from one non-empty holder to another.
std::optional<std::string> leaderHandover(HandoverBaseline& baseline, const std::string& holder,
                                          std::int64_t lease_transitions);

}  // namespace kvc::policy
