#include "kvc/policy/store/leader_timing.h"

namespace kvc::policy {

LeaderTiming leaderTiming(std::chrono::seconds lease) {
  const std::chrono::milliseconds whole = lease;
  return {whole, whole * 3 / 4, whole / 8, whole / 8};
}

std::vector<std::string> leaderTimingArgs(const LeaderTiming& timing) {
  const auto ms = [](std::chrono::milliseconds d) { return std::to_string(d.count()) + "ms"; };
  return {"--lease-duration=" + ms(timing.lease_duration),
          "--renew-deadline=" + ms(timing.renew_deadline),
          "--retry-period=" + ms(timing.retry_period), "--stop-grace=" + ms(timing.stop_grace)};
}

}  // namespace kvc::policy
