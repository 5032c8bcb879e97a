#include "kvc/store/health.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace kvc::store {
namespace {

TEST(HealthTest, RecordedNonHaMasterIsServingLeader) {
  for (const char* version : {testing::kCurrent, testing::kLegacy}) {
    auto health = parseHealth(testing::readFixture(version, "health.json"));
    ASSERT_TRUE(health.ok()) << version << ": " << health.error().message();
    EXPECT_TRUE(health->service_ready);
    EXPECT_EQ(health->role, "leader");
    EXPECT_EQ(health->ha_state, "serving");
    EXPECT_FALSE(health->leader_address.has_value()) << "null on a master without HA";
    EXPECT_FALSE(health->view_version.has_value());
  }
}

TEST(HealthTest, ServiceReadyIsTheVerdictNotStatus) {
  auto standby =
      parseHealth(R"({"status":"ok","role":"standby","ha_state":"standby","service_ready":false,)"
                  R"("leader_address":"10.0.0.5:50051","view_version":7})");
  ASSERT_TRUE(standby.ok());
  EXPECT_FALSE(standby->service_ready);
  EXPECT_EQ(standby->status, "ok");
  EXPECT_EQ(standby->leader_address, "10.0.0.5:50051");
  EXPECT_EQ(standby->view_version, 7);

  auto odd_status = parseHealth(R"({"status":"degraded","service_ready":true})");
  ASSERT_TRUE(odd_status.ok());
  EXPECT_TRUE(odd_status->service_ready);
}

TEST(HealthTest, MissingOrMistypedServiceReadyIsMalformed) {
  for (const char* body :
       {R"({"status":"ok"})", R"({"service_ready":"true"})", R"({"service_ready":1})",
        R"({"service_ready":null})", "[]", "ok", "", R"({"service_ready":true,"role":5})"}) {
    auto health = parseHealth(body);
    ASSERT_FALSE(health.ok()) << body;
    EXPECT_EQ(health.error().kind(), StoreErrorKind::MalformedBody) << body;
  }
}

}  // namespace
}  // namespace kvc::store
