#pragma once
// The store launcher's election timing (`kvcache store leader`), all from one lease duration
// (the Setting kv-cache-leader-lease-duration; docs/backends.md, "Failover and fencing"):
//
//   renew deadline = 3/4 of the lease   a holder cut off from the API server stops its master
//   stop grace     = 1/8                at the renew deadline, SIGKILL at most this later,
//   retry period   = 1/8                so its master is gone before 7/8 of the lease; no
//                                       standby takes the Lease before the whole lease
//
// so the launcher's fencing rule (runtime::validateFencing: renew deadline + stop grace + 250 ms
// within the lease) holds for every lease of two seconds or more, and a hard-killed leader's
// standby serves about one lease after the kill. The Lease counts whole seconds.

#include <chrono>
#include <string>
#include <vector>

#include "kvc/api/settings.h"

namespace kvc::policy {

struct LeaderTiming {
  std::chrono::milliseconds lease_duration{};
  std::chrono::milliseconds renew_deadline{};
  std::chrono::milliseconds retry_period{};
  std::chrono::milliseconds stop_grace{};
};

constexpr LeaderTiming leaderTiming(std::chrono::seconds lease) {
  const std::chrono::milliseconds whole = lease;
  return {whole, whole * 3 / 4, whole / 8, whole / 8};
}

// A duration as the launcher's flags take it: "4000ms".
std::string durationValue(std::chrono::milliseconds d);

// The launcher's flags for it: --lease-duration=4000ms --renew-deadline=3000ms ...
std::vector<std::string> leaderTimingArgs(const LeaderTiming& timing);

}  // namespace kvc::policy
