// The tenant ledger of a real multi-tenant master, through the C++ admin client.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "kvc/policy/quota/tenant_quota_policy.h"
#include "kvc/store/recut.h"
#include "store_env.h"

namespace kvc::store::integration {
namespace {

constexpr std::int64_t kPage = 4096;

class LedgerFixture : public ::testing::Test {
protected:
  void SetUp() override {
    KVC_REQUIRE_STORE();
    env_ = &StoreEnv::get();
    env_->resetLedger();
    client_ = env_->client();
    ASSERT_NE(client_, nullptr);
    auto metrics = client_->metrics();
    ASSERT_TRUE(metrics.ok()) << metrics.error().message();
    ASSERT_TRUE(metrics->allocatable_capacity_bytes.has_value());
    capacity_ = *metrics->allocatable_capacity_bytes;
    ASSERT_EQ(capacity_, env_->members() * env_->segmentBytes())
        << "every member must be mounted (did a member-loss test leave one out?)";
  }
  void TearDown() override {
    if (env_ != nullptr) {
      env_->resetLedger();
    }
  }

  // The policy the master persisted through its file connector.
  std::vector<policy::TenantPolicy> persistedPolicy() const {
    std::ifstream in(env_->value("KVC_STORE_POLICY_FILE"));
    std::ostringstream text;
    text << in.rdbuf();
    auto tenants = policy::parsePolicyFile(text.str());
    EXPECT_TRUE(tenants.ok()) << tenants.status().message() << "\n" << text.str();
    return tenants.ok() ? *tenants : std::vector<policy::TenantPolicy>{};
  }

  const StoreEnv* env_ = nullptr;
  std::unique_ptr<AdminClient> client_;
  std::int64_t capacity_ = 0;
};

using Ledger = LedgerFixture;
using LedgerErrors = LedgerFixture;

TEST_F(Ledger, TwoTenantsWhoseCeilingsFitAreGrantedTheirCeilings) {
  const std::int64_t a = capacity_ / 4;
  const std::int64_t b = capacity_ / 2;
  ASSERT_TRUE(client_->putTenantQuota("team-a", a).ok());
  auto put_b = client_->putTenantQuota("team-b", b);
  ASSERT_TRUE(put_b.ok()) << put_b.error().message();
  EXPECT_EQ(put_b->effective_quota_bytes, b);

  auto list = client_->listTenantQuotas();
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].tenant_id, "team-a");
  EXPECT_EQ((*list)[0].requested_quota_bytes, a);
  EXPECT_EQ((*list)[0].effective_quota_bytes, a);
  EXPECT_TRUE((*list)[0].has_explicit_policy);
  EXPECT_FALSE((*list)[0].over_quota);
  EXPECT_EQ((*list)[1].effective_quota_bytes, b);

  auto metrics = client_->metrics();
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->tenants.at("team-a").effective_bytes, a);
  EXPECT_EQ(metrics->effective_bytes_sum, a + b);
  EXPECT_EQ(persistedPolicy(), (std::vector<policy::TenantPolicy>{{"team-a", a}, {"team-b", b}}));
}

TEST_F(Ledger, CeilingsPastTheCapacityAreCutInProportion) {
  const std::vector<QuotaRequest> requests = {
      {"team-a", capacity_}, {"team-b", 2 * capacity_}, {"team-c", capacity_ / 2 + 12345}};
  std::int64_t sum = 0;
  for (const QuotaRequest& request : requests) {
    ASSERT_TRUE(client_->putTenantQuota(request.tenant_id, request.requested_bytes).ok());
    sum += request.requested_bytes;
  }
  auto list = client_->listTenantQuotas();
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list->size(), requests.size());
  const auto expected = expectedGrants(capacity_, requests);
  std::int64_t granted = 0;
  for (const TenantQuota& entry : *list) {
    // floor(capacity x requested / sum), within one page...
    const auto formula = static_cast<std::int64_t>(static_cast<long double>(capacity_) *
                                                   entry.requested_quota_bytes / sum);
    EXPECT_LE(std::abs(entry.effective_quota_bytes - formula), kPage) << entry.tenant_id;
    // ...and exactly the master's largest-remainder rounding.
    EXPECT_EQ(entry.effective_quota_bytes, expected.at(entry.tenant_id)) << entry.tenant_id;
    granted += entry.effective_quota_bytes;
    std::cout << entry.tenant_id << ": requested " << entry.requested_quota_bytes << ", granted "
              << entry.effective_quota_bytes << " (formula " << formula << ")\n";
  }
  EXPECT_EQ(granted, capacity_) << "the grants add up to the capacity";
}

TEST_F(Ledger, LeftoverBytesOfEqualRemaindersGoByTenantId) {
  // Three equal requests over the capacity: the remainders tie, the ids decide.
  const std::vector<QuotaRequest> requests = {
      {"tie-c", capacity_}, {"tie-a", capacity_}, {"tie-b", capacity_}};
  for (const QuotaRequest& request : requests) {
    ASSERT_TRUE(client_->putTenantQuota(request.tenant_id, request.requested_bytes).ok());
  }
  auto list = client_->listTenantQuotas();
  ASSERT_TRUE(list.ok()) << list.error().message();
  const auto expected = expectedGrants(capacity_, requests);
  for (const TenantQuota& entry : *list) {
    EXPECT_EQ(entry.effective_quota_bytes, expected.at(entry.tenant_id)) << entry.tenant_id;
    std::cout << entry.tenant_id << ": granted " << entry.effective_quota_bytes << "\n";
  }
}

TEST_F(Ledger, DeletedTenantLeavesTheLedgerAndThePolicyFile) {
  ASSERT_TRUE(client_->putTenantQuota("team-gone", 1 << 20).ok());
  auto deleted = client_->deleteTenantQuota("team-gone");
  ASSERT_TRUE(deleted.ok()) << deleted.error().message();
  EXPECT_TRUE(client_->getTenantQuota("team-gone").is(StoreErrorKind::TenantNotFound));
  auto list = client_->listTenantQuotas();
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->empty());
  EXPECT_TRUE(persistedPolicy().empty());
}

TEST_F(LedgerErrors, UnknownTenantIsNotFound) {
  auto get = client_->getTenantQuota("no-such-tenant");
  ASSERT_FALSE(get.ok());
  EXPECT_EQ(get.error().kind(), StoreErrorKind::TenantNotFound);
  EXPECT_EQ(get.error().httpStatus(), 404);
  EXPECT_EQ(get.error().errorCode(), kErrObjectNotFound);
  EXPECT_TRUE(client_->deleteTenantQuota("no-such-tenant").is(StoreErrorKind::TenantNotFound));
}

TEST_F(LedgerErrors, InvalidQuotaIsInvalidParams) {
  for (std::int64_t quota : {std::int64_t{0}, std::int64_t{-1}}) {
    auto put = client_->putTenantQuota("team-x", quota);
    ASSERT_FALSE(put.ok()) << quota;
    EXPECT_EQ(put.error().kind(), StoreErrorKind::InvalidParams) << put.error().message();
    EXPECT_EQ(put.error().httpStatus(), 400);
    EXPECT_EQ(put.error().errorCode(), kErrInvalidParams);
  }
  EXPECT_TRUE(client_->putTenantQuota("_reserved", 1024).is(StoreErrorKind::InvalidParams));
  EXPECT_TRUE(client_->getTenantQuota("team-x").is(StoreErrorKind::TenantNotFound))
      << "nothing was applied";
}

TEST_F(LedgerErrors, TenantStillHoldingDataIsNotEmpty) {
  ASSERT_TRUE(client_->putTenantQuota("team-full", capacity_ / 2).ok());
  ASSERT_EQ(env_->writeObject("team-full", "held"), 0);
  auto entry = client_->getTenantQuota("team-full");
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ(entry->occupancyBytes(), 1 << 20);

  auto deleted = client_->deleteTenantQuota("team-full");
  ASSERT_FALSE(deleted.ok());
  EXPECT_EQ(deleted.error().kind(), StoreErrorKind::TenantNotEmpty) << deleted.error().message();
  EXPECT_EQ(deleted.error().httpStatus(), 409);
  EXPECT_EQ(deleted.error().errorCode(), kErrTenantNotEmpty);
  auto kept = client_->getTenantQuota("team-full");
  ASSERT_TRUE(kept.ok()) << "the policy is restored";
  EXPECT_TRUE(kept->has_explicit_policy);

  ASSERT_TRUE(env_->removeAllObjects("team-full"));
  EXPECT_TRUE(client_->deleteTenantQuota("team-full").ok());
}

TEST_F(LedgerErrors, UnwritablePolicyFileIsPersistFailedAndNothingIsApplied) {
  const std::string path = env_->value("KVC_STORE_POLICY_FILE");
  ASSERT_EQ(std::rename(path.c_str(), (path + ".saved").c_str()), 0);
  ASSERT_EQ(std::system(("mkdir " + path).c_str()), 0);  // the connector's rename now fails
  auto put = client_->putTenantQuota("team-p", 1024);
  std::system(("rmdir " + path).c_str());
  ASSERT_EQ(std::rename((path + ".saved").c_str(), path.c_str()), 0);
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().kind(), StoreErrorKind::PersistFailed) << put.error().message();
  EXPECT_EQ(put.error().httpStatus(), 500);
  EXPECT_TRUE(client_->getTenantQuota("team-p").is(StoreErrorKind::TenantNotFound));
}

}  // namespace
}  // namespace kvc::store::integration
