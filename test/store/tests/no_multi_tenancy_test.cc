// A master started without --enable_multi_tenants (fixture store_nomt).
#include <gtest/gtest.h>

#include "store_env.h"

namespace kvc::store::integration {
namespace {

void expectDisabled(const StoreError& error) {
  EXPECT_EQ(error.kind(), StoreErrorKind::MultiTenancyDisabled) << error.message();
  EXPECT_EQ(error.httpStatus(), 409);
  EXPECT_EQ(error.errorCode(), kErrUnavailableInCurrentMode);
}

TEST(NoMultiTenancy, EveryLedgerRouteAnswersMultiTenancyDisabled) {
  KVC_REQUIRE_STORE();
  const StoreEnv& env = StoreEnv::get();
  ASSERT_EQ(env.value("KVC_STORE_MULTI_TENANCY"), "0") << "run against store_nomt";
  auto client = env.client();
  ASSERT_NE(client, nullptr);

  auto list = client->listTenantQuotas();
  ASSERT_FALSE(list.ok());
  expectDisabled(list.error());
  auto get = client->getTenantQuota("team-a");
  ASSERT_FALSE(get.ok());
  expectDisabled(get.error());
  auto put = client->putTenantQuota("team-a", 1 << 20);
  ASSERT_FALSE(put.ok());
  expectDisabled(put.error());
  auto deleted = client->deleteTenantQuota("team-a");
  ASSERT_FALSE(deleted.ok());
  expectDisabled(deleted.error());
}

TEST(NoMultiTenancy, MetricsHaveNoTenantBlockAndAnyTenantWritesAsDefault) {
  KVC_REQUIRE_STORE();
  const StoreEnv& env = StoreEnv::get();
  auto client = env.client();
  ASSERT_NE(client, nullptr);
  auto health = client->health();
  ASSERT_TRUE(health.ok());
  EXPECT_TRUE(health->service_ready);

  EXPECT_EQ(env.writeObject("whoever", "nomt"), 0) << "no admission without multi-tenancy";
  auto metrics = client->metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.error().message();
  EXPECT_FALSE(metrics->hasTenantBlock());
  EXPECT_EQ(metrics->total_capacity_bytes, env.members() * env.segmentBytes());
  EXPECT_GE(metrics->allocated_bytes.value_or(0), 1 << 20);
  EXPECT_TRUE(env.removeAllObjects("default"));
}

}  // namespace
}  // namespace kvc::store::integration
