// Strict multi-tenant admission on a real master: a write needs a registered tenant.
#include <gtest/gtest.h>

#include "store_env.h"

namespace kvc::store::integration {
namespace {

TEST(StrictMode, WriteUnderAnUnregisteredTenantFailsUntilItIsRegistered) {
  KVC_REQUIRE_STORE();
  const StoreEnv& env = StoreEnv::get();
  env.resetLedger();
  auto client = env.client();
  ASSERT_NE(client, nullptr);

  EXPECT_EQ(env.writeObject("strict-team", "first"), kErrTenantNotRegistered)
      << "TENANT_NOT_REGISTERED (-1701) expected before registration";
  // `default` is not special: it must be registered like any other tenant.
  EXPECT_EQ(env.writeObject("default", "first"), kErrTenantNotRegistered);
  EXPECT_TRUE(client->getTenantQuota("strict-team").is(StoreErrorKind::TenantNotFound));

  ASSERT_TRUE(client->putTenantQuota("strict-team", 64 << 20).ok());
  EXPECT_EQ(env.writeObject("strict-team", "second"), 0);

  auto entry = client->getTenantQuota("strict-team");
  ASSERT_TRUE(entry.ok()) << entry.error().message();
  EXPECT_EQ(entry->occupancyBytes(), 1 << 20);
  auto metrics = client->metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.error().message();
  EXPECT_EQ(metrics->tenants.at("strict-team").occupancyBytes(), 1 << 20);
  EXPECT_EQ(metrics->allocated_bytes, 1 << 20);
  env.resetLedger();
}

}  // namespace
}  // namespace kvc::store::integration
