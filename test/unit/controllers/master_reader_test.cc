// The controllers' I/O against a master, on a scripted admin client: what a pass reads, in what
// order, and how each answer of the ledger lands in the reading the statuses are judged by.
#include "internal/master_reader.h"

#include "internal/counted_admin_client.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>

namespace kvc::controllers::internal {
namespace {

using store::StoreError;
using store::StoreErrorKind;

store::TenantQuota entry(const std::string& id, std::int64_t requested, std::int64_t effective) {
  store::TenantQuota q;
  q.tenant_id = id;
  q.requested_quota_bytes = requested;
  q.effective_quota_bytes = effective;
  q.has_explicit_policy = true;
  return q;
}

// store::AdminClient
class ScriptedMaster final : public store::AdminClient {
public:
  const std::string& address() const override { return address_; }
  store::StoreResult<store::Health> health() override {
    calls.push_back("GET /health");
    if (!health_ok) {
      return StoreError(StoreErrorKind::Transport, "connection refused");
    }
    store::Health h;
    h.service_ready = serving;
    h.role = serving ? "leader" : "standby";
    return h;
  }
  store::StoreResult<store::StoreMetrics> metrics() override {
    calls.push_back("GET /metrics");
    if (metrics_error) {
      return *metrics_error;
    }
    return metrics_value;
  }
  store::StoreResult<store::SegmentListing> segments() override {
    calls.push_back("GET /get_segments_detail");
    if (segments_error) {
      return *segments_error;
    }
    return store::SegmentListing{};
  }
  store::StoreResult<std::vector<store::TenantQuota>> listTenantQuotas() override {
    calls.push_back("GET ledger");
    if (list_error) {
      return *list_error;
    }
    std::vector<store::TenantQuota> out;
    for (const auto& [id, q] : ledger) {
      out.push_back(q);
    }
    return out;
  }
  store::StoreResult<store::TenantQuota> getTenantQuota(std::string_view) override {
    return StoreError(StoreErrorKind::TenantNotFound, "unused");
  }
  store::StoreResult<store::TenantQuota> putTenantQuota(std::string_view id,
                                                        std::int64_t bytes) override {
    calls.push_back("PUT " + std::string(id));
    if (auto it = put_errors.find(std::string(id)); it != put_errors.end()) {
      return it->second;
    }
    ledger[std::string(id)] = entry(std::string(id), bytes, bytes);
    return ledger[std::string(id)];
  }
  store::StoreResult<std::optional<store::TenantQuota>> deleteTenantQuota(
      std::string_view id) override {
    calls.push_back("DELETE " + std::string(id));
    if (auto it = delete_errors.find(std::string(id)); it != delete_errors.end()) {
      return it->second;
    }
    ledger.erase(std::string(id));
    return std::optional<store::TenantQuota>();
  }

  std::string address_ = "10.0.0.7:9003";
  bool health_ok = true;
  bool serving = true;
  std::optional<StoreError> metrics_error;
  std::optional<StoreError> segments_error;
  std::optional<StoreError> list_error;
  store::StoreMetrics metrics_value;
  std::map<std::string, store::TenantQuota> ledger;
  std::map<std::string, StoreError> put_errors;
  std::map<std::string, StoreError> delete_errors;
  std::vector<std::string> calls;
};

TEST(ReadBackendTest, AMasterThatDoesNotServeIsReadOnce) {
  ScriptedMaster master;
  master.serving = false;
  const policy::BackendReading reading = readBackend(master);
  EXPECT_EQ(reading.health, policy::BackendReading::Health::NotServing);
  EXPECT_EQ(reading.role, "standby");
  EXPECT_EQ(master.calls, std::vector<std::string>{"GET /health"});  // capacity only when serving
}

TEST(ReadBackendTest, AServingMasterIsReadInAtMostThreeRequests) {
  ScriptedMaster master;
  master.metrics_value.total_capacity_bytes = 512;
  master.segments_error = StoreError(StoreErrorKind::RouteNotServed, "404");
  const policy::BackendReading reading = readBackend(master);
  EXPECT_EQ(master.calls,
            (std::vector<std::string>{"GET /health", "GET /metrics", "GET /get_segments_detail"}));
  EXPECT_EQ(reading.total_capacity_bytes, 512);
  EXPECT_EQ(reading.listing, policy::BackendReading::Listing::NotServed);
}

TEST(ReadBackendTest, AnUnreachableMasterSaysWhy) {
  ScriptedMaster master;
  master.health_ok = false;
  const policy::BackendReading reading = readBackend(master);
  EXPECT_EQ(reading.health, policy::BackendReading::Health::Unreadable);
  EXPECT_EQ(reading.health_error, "connection refused");
}

TEST(LedgerSessionTest, MultiTenancyDisabledIsTheNoLedgerPath) {
  ScriptedMaster master;
  master.list_error = StoreError(StoreErrorKind::MultiTenancyDisabled, "409 -1011", 409, -1011);
  policy::MasterReading reading;
  LedgerSession(master).read(reading);
  EXPECT_EQ(reading.ledger, policy::LedgerState::NoLedger);
  EXPECT_TRUE(reading.ledger_error.empty());
}

TEST(LedgerSessionTest, WritesThePlanAndReadsTheGrantsBack) {
  ScriptedMaster master;
  master.ledger["old"] = entry("old", 1, 1);
  policy::MasterReading reading;
  LedgerSession session(master);
  session.read(reading);
  ASSERT_EQ(reading.ledger, policy::LedgerState::Read);
  policy::LedgerPlan plan;
  plan.puts = {{"a", 10}, {"b", 20}};
  plan.deletes = {"old"};
  EXPECT_EQ(session.apply(plan, reading), (std::vector<std::string>{"a", "b", "old"}));
  EXPECT_EQ(master.calls,
            (std::vector<std::string>{"GET ledger", "PUT a", "PUT b", "DELETE old", "GET ledger"}));
  ASSERT_EQ(reading.tenants.size(), 2U);
  EXPECT_EQ(reading.tenants[1].tenant_id, "b");
  EXPECT_EQ(reading.tenants[1].effective_bytes, 20);
  EXPECT_TRUE(reading.ledger_error.empty());
}

TEST(LedgerSessionTest, PerDomainAnswersAreRecordedAndTheOthersStillWritten) {
  ScriptedMaster master;
  master.ledger["busy"] = entry("busy", 1, 1);
  master.ledger["odd"] = entry("odd", 1, 1);
  master.put_errors.emplace("a", StoreError(StoreErrorKind::PersistFailed,
                                            "writing the quota of "
                                            "reuse domain \"a\": PERSISTENT_FAIL",
                                            500, -1503));
  master.delete_errors.emplace("busy",
                               StoreError(StoreErrorKind::TenantNotEmpty, "not empty", 409, -1702));
  master.delete_errors.emplace("odd", StoreError(StoreErrorKind::UnexpectedStatus, "status 418"));
  policy::MasterReading reading;
  LedgerSession session(master);
  session.read(reading);
  policy::LedgerPlan plan;
  plan.puts = {{"a", 10}, {"b", 20}};
  plan.deletes = {"busy", "odd"};
  EXPECT_EQ(session.apply(plan, reading), std::vector<std::string>{"b"});  // a, busy, odd refused
  EXPECT_NE(reading.persist_error.find("PERSISTENT_FAIL"), std::string::npos);
  EXPECT_EQ(reading.retained, std::vector<std::string>{"busy"});
  EXPECT_EQ(reading.removal_errors.at("odd"), "status 418");
  EXPECT_TRUE(reading.ledger_error.empty());  // the ledger itself answered
  EXPECT_EQ(master.ledger.count("b"), 1U);    // written despite a's failure
}

TEST(LedgerSessionTest, AFailingMasterStopsTheWritesAndIsNamed) {
  ScriptedMaster master;
  master.put_errors.emplace(
      "a", StoreError(StoreErrorKind::Transport, "writing the quota of reuse domain \"a\": reset"));
  policy::MasterReading reading;
  LedgerSession session(master);
  session.read(reading);
  policy::LedgerPlan plan;
  plan.puts = {{"a", 10}, {"b", 20}};
  EXPECT_TRUE(session.apply(plan, reading).empty());
  EXPECT_EQ(reading.ledger_error, "writing the quota of reuse domain \"a\": reset");
  EXPECT_EQ(master.ledger.count("b"), 0U);  // not attempted
}

TEST(LedgerSessionTest, OneScrapeFeedsEveryTenant) {
  ScriptedMaster master;
  store::TenantMetrics t;
  t.requested_bytes = 10;
  t.effective_bytes = 8;
  t.charged_bytes = 3;
  t.explicit_policy = 1;
  master.metrics_value.tenants["a"] = t;
  master.metrics_value.allocatable_capacity_bytes = 100;
  policy::MasterReading reading;
  LedgerSession(master).scrape(reading);
  ASSERT_TRUE(reading.scraped);
  EXPECT_EQ(reading.allocatable_bytes, 100);
  EXPECT_EQ(reading.tenant_figures.at("a").effective_bytes, 8);
  EXPECT_EQ(reading.tenant_figures.at("a").occupancy_bytes, 3);
  EXPECT_EQ(reading.tenant_figures.at("a").explicit_policy, true);
  EXPECT_TRUE(reading.occupancy_includes_in_flight);
  EXPECT_EQ(master.calls, std::vector<std::string>{"GET /metrics"});
}

TEST(CountedAdminClientsTest, CountEachRequestByBackendOperationAndResult) {
  runtime::Registry registry;
  const AdminClientFactory factory = countedAdminClients(
      [](const StoreTarget& target) -> Result<std::unique_ptr<store::AdminClient>> {
        if (target.admin_address.empty()) {
          return Status(StatusCode::FailedPrecondition, "no Secret can be read");
        }
        auto master = std::make_unique<ScriptedMaster>();
        master->put_errors.emplace("full", StoreError(StoreErrorKind::PersistFailed, "500", 500));
        master->delete_errors.emplace("busy",
                                      StoreError(StoreErrorKind::TenantNotEmpty, "409", 409));
        return std::unique_ptr<store::AdminClient>(std::move(master));
      },
      registry);
  auto client = factory(StoreTarget{"10.0.0.7:9003", "", false, "shared"});
  ASSERT_TRUE(client.ok());
  LedgerSession session(**client);
  policy::MasterReading reading;
  session.read(reading);
  policy::LedgerPlan plan;
  plan.puts = {{"a", 10}, {"full", 20}};
  plan.deletes = {"busy"};
  session.apply(plan, reading);
  EXPECT_EQ((*client)->address(), "10.0.0.7:9003");
  EXPECT_FALSE(factory(StoreTarget{"", "", false, "shared"}).ok());

  const std::string text = registry.render();
  for (
      const char* line : {
          R"(kvcache_master_requests_total{backend="shared",operation="ledger_list",result="ok"} 2)",
          R"(kvcache_master_requests_total{backend="shared",operation="ledger_put",result="ok"} 1)",
          R"(kvcache_master_requests_total{backend="shared",operation="ledger_put",result="PersistFailed"} 1)",
          R"(kvcache_master_requests_total{backend="shared",operation="ledger_delete",result="TenantNotEmpty"} 1)",
          R"(kvcache_master_requests_total{backend="shared",operation="connect",result="FailedPrecondition"} 1)",
      }) {
    EXPECT_NE(text.find(std::string(line) + "\n"), std::string::npos) << line << "\n" << text;
  }
}

}  // namespace
}  // namespace kvc::controllers::internal
