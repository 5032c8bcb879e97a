#include "kvc/store/recut.h"

#include <gtest/gtest.h>

#include <numeric>

namespace kvc::store {
namespace {

std::int64_t total(const std::map<std::string, std::int64_t>& grants) {
  std::int64_t sum = 0;
  for (const auto& [tenant, grant] : grants) {
    sum += grant;
  }
  return sum;
}

TEST(RecutTest, RequestsThatFitAreGrantedExactly) {
  const auto grants = expectedGrants(/*capacity=*/1000, {{"a", 300}, {"b", 700}});
  EXPECT_EQ(grants.at("a"), 300);
  EXPECT_EQ(grants.at("b"), 700);
  // Spare capacity is not handed out.
  EXPECT_EQ(expectedGrants(1000, {{"a", 10}}).at("a"), 10);
}

TEST(RecutTest, MatchesWhatARealMasterGranted) {
  // Observed on 0.3.13.post1: 256 MiB + 512 MiB requested over 512 MiB mounted.
  const auto grants = expectedGrants(536870912, {{"team-a", 268435456}, {"team-b", 536870912}});
  EXPECT_EQ(grants.at("team-a"), 178956971);
  EXPECT_EQ(grants.at("team-b"), 357913941);
  // And 64 MiB + 128 MiB over 128 MiB (the recorded fixtures).
  const auto small = expectedGrants(134217728, {{"team-a", 67108864}, {"team-b", 134217728}});
  EXPECT_EQ(small.at("team-a"), 44739243);
  EXPECT_EQ(small.at("team-b"), 89478485);
}

TEST(RecutTest, LeftoverBytesGoToLargestRemaindersThenByTenantId) {
  // 10 over 3 equal requests: 3 each, one byte left, to the first id.
  const auto grants = expectedGrants(10, {{"c", 5}, {"b", 5}, {"a", 5}});
  EXPECT_EQ(grants.at("a"), 4);
  EXPECT_EQ(grants.at("b"), 3);
  EXPECT_EQ(grants.at("c"), 3);
  EXPECT_EQ(total(grants), 10);
}

TEST(RecutTest, GrantsAddUpToCapacityEvenForHugeRequests) {
  const std::int64_t max = INT64_MAX;
  const auto grants = expectedGrants(536870912, {{"x", max}, {"y", max / 3}, {"z", 1}});
  EXPECT_EQ(total(grants), 536870912);
  EXPECT_EQ(grants.at("z"), 0);
}

TEST(RecutTest, NoCapacityGrantsNothing) {
  const auto grants = expectedGrants(0, {{"a", 5}});
  EXPECT_EQ(grants.at("a"), 0);
}

}  // namespace
}  // namespace kvc::store
