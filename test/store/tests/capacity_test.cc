// Capacity and members, read back from a real master with the C++ admin client.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "store_env.h"

namespace kvc::store::integration {
namespace {

using std::chrono::milliseconds;

TEST(Capacity, MasterIsServingAndCapacityIsTheSumOfTheMembersSegments) {
  KVC_REQUIRE_STORE();
  const StoreEnv& env = StoreEnv::get();
  auto client = env.client();
  ASSERT_NE(client, nullptr);

  auto health = client->health();
  ASSERT_TRUE(health.ok()) << health.error().message();
  EXPECT_TRUE(health->service_ready);

  const std::int64_t expected = env.members() * env.segmentBytes();
  auto listing = client->segments();
  ASSERT_TRUE(listing.ok()) << listing.error().message();
  ASSERT_EQ(static_cast<std::int64_t>(listing->segments.size()), env.members());
  EXPECT_EQ(listing->capacityBytes(), expected);
  for (int i = 0; i < env.members(); ++i) {
    const Segment* segment = listing->find(env.memberSegment(i));
    ASSERT_NE(segment, nullptr) << "member " << i << " (" << env.memberSegment(i) << ")";
    EXPECT_EQ(segment->size_bytes, env.segmentBytes());
    EXPECT_EQ(segment->status, "OK");
    EXPECT_EQ(segment->protocol, "tcp");
  }

  auto metrics = client->metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.error().message();
  EXPECT_EQ(metrics->total_capacity_bytes, expected);
  EXPECT_EQ(metrics->allocatable_capacity_bytes, expected);
  std::cout << "capacity read back: " << expected << " bytes from " << env.members()
            << " members\n";
}

TEST(MemberLoss, StoppedMemberLeavesTheListingAndReturnsWhenRestarted) {
  KVC_REQUIRE_STORE();
  const StoreEnv& env = StoreEnv::get();
  ASSERT_GE(env.members(), 2) << "needs a second member to stop";
  auto client = env.client();
  ASSERT_NE(client, nullptr);
  const std::int64_t full = env.members() * env.segmentBytes();
  const std::string segment = env.memberSegment(1);
  const auto expiry = milliseconds((env.clientTtlSeconds() + 15) * 1000);

  auto listed = [&](bool want_present, std::int64_t want_capacity) {
    auto listing = client->segments();
    auto metrics = client->metrics();
    return listing.ok() && metrics.ok() && (listing->find(segment) != nullptr) == want_present &&
           listing->capacityBytes() == want_capacity &&
           metrics->total_capacity_bytes == want_capacity &&
           metrics->allocatable_capacity_bytes == want_capacity;
  };
  ASSERT_TRUE(listed(true, full));

  // SIGTERM: mooncake_client does not unmount, the master expires it after --client_ttl.
  const auto stopped_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(env.stopMember(1));
  ASSERT_TRUE(eventually([&] { return listed(false, full - env.segmentBytes()); }, expiry))
      << "segment " << segment << " still listed, or capacity did not drop";
  const auto gone_after =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - stopped_at);
  std::cout << "segment left the listing " << gone_after.count() << " ms after SIGTERM (client_ttl "
            << env.clientTtlSeconds() << " s)\n";

  const auto started_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(env.startMember(1));
  ASSERT_TRUE(eventually([&] { return listed(true, full); }, milliseconds(15000)))
      << "segment " << segment << " did not come back";
  std::cout << "segment listed again "
            << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() -
                                                        started_at)
                   .count()
            << " ms after the restart\n";
}

TEST(Metrics, RealScrapeParsesStrictlyAndMatchesTheLedger) {
  KVC_REQUIRE_STORE();
  const StoreEnv& env = StoreEnv::get();
  env.resetLedger();
  auto client = env.client();
  ASSERT_NE(client, nullptr);
  auto put = client->putTenantQuota("metrics-a", env.segmentBytes());
  ASSERT_TRUE(put.ok()) << put.error().message();

  auto metrics = client->metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.error().message();
  EXPECT_GT(metrics->samples.size(), 100u);
  ASSERT_EQ(metrics->tenants.count("metrics-a"), 1u);
  const TenantMetrics& tenant = metrics->tenants.at("metrics-a");
  EXPECT_EQ(tenant.requested_bytes, env.segmentBytes());
  EXPECT_EQ(tenant.effective_bytes, put->effective_quota_bytes);
  EXPECT_EQ(tenant.explicit_policy, 1);
  EXPECT_EQ(tenant.occupancyBytes(), 0);
  // 0.3.12.x reports used/reserved/committed families, 0.3.13 charged/admission_closed.
  const bool legacy = env.value("KVC_STORE_VERSION").rfind("0.3.12", 0) == 0;
  EXPECT_EQ(metrics->ledgerGeneration(),
            legacy ? LedgerGeneration::Used : LedgerGeneration::Charged);
  EXPECT_EQ(metrics->requested_bytes_sum, env.segmentBytes());
  env.resetLedger();
}

}  // namespace
}  // namespace kvc::store::integration
