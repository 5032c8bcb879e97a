#include "kvc/policy/store/leader_timing.h"

namespace kvc::policy {

std::string durationValue(std::chrono::milliseconds d) { return std::to_string(d.count()) + "ms"; }

std::vector<std::string> leaderTimingArgs(const LeaderTiming& timing) {
  return {"--lease-duration=" + durationValue(timing.lease_duration),
          "--renew-deadline=" + durationValue(timing.renew_deadline),
          "--retry-period=" + durationValue(timing.retry_period),
          "--stop-grace=" + durationValue(timing.stop_grace)};
}

}  // namespace kvc::policy
