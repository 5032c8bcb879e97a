// The leader launcher's timing from one lease (policy/store/leader_timing.h): the flags rendered,
// and the fencing rule the launcher checks at start holding for every lease the Setting allows.
#include "kvc/policy/store/leader_timing.h"

#include <gtest/gtest.h>

#include "kvc/runtime/leader_election.h"

namespace kvc::policy {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(LeaderTiming, TheDefaultLeaseGivesTheLaunchersDefaults) {
  const LeaderTiming timing = leaderTiming(api::kDefaultLeaderLease);
  EXPECT_EQ(timing.lease_duration, seconds(4));
  EXPECT_EQ(timing.renew_deadline, seconds(3));
  EXPECT_EQ(timing.retry_period, milliseconds(500));
  EXPECT_EQ(timing.stop_grace, milliseconds(500));
  EXPECT_EQ(leaderTimingArgs(timing),
            (std::vector<std::string>{"--lease-duration=4000ms", "--renew-deadline=3000ms",
                                      "--retry-period=500ms", "--stop-grace=500ms"}));
}

TEST(LeaderTiming, EveryLeaseTheSettingAllowsIsFencedAndValid) {
  for (auto lease = api::kMinLeaderLease; lease <= api::kMaxLeaderLease; ++lease) {
    const LeaderTiming t = leaderTiming(lease);
    EXPECT_TRUE(
        runtime::validateLeaderElectionTiming(t.lease_duration, t.renew_deadline, t.retry_period)
            .ok())
        << lease.count();
    EXPECT_TRUE(runtime::validateFencing(t.lease_duration, t.renew_deadline, t.stop_grace).ok())
        << lease.count();
  }
  // Below the minimum the rule breaks: the reason the Setting starts at 2 s.
  const LeaderTiming one = leaderTiming(seconds(1));
  EXPECT_FALSE(
      runtime::validateFencing(one.lease_duration, one.renew_deadline, one.stop_grace).ok());
}

}  // namespace
}  // namespace kvc::policy
