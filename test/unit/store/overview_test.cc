#include "kvc/store/overview.h"

#include <gtest/gtest.h>

#include <string>

#include "fixtures.h"

namespace kvc::store {
namespace {

using testing::kCurrent;
using testing::readFixture;

// A master served from the recorded answers, or failing as told.
class RecordedMaster final : public AdminClient {
public:
  const std::string& address() const override { return address_; }
  StoreResult<Health> health() override {
    ++calls;
    if (unreachable) {
      return StoreError(StoreErrorKind::Transport, "connection refused");
    }
    return parseHealth(readFixture(kCurrent, "health.json"));
  }
  StoreResult<StoreMetrics> metrics() override {
    ++calls;
    return parseMetrics(
        readFixture(kCurrent, multi_tenancy ? "metrics.txt" : "metrics_no_multi_tenancy.txt"));
  }
  StoreResult<SegmentListing> segments() override {
    ++calls;
    return parseSegmentsDetail(readFixture(kCurrent, "segments_detail.json"));
  }
  StoreResult<std::vector<TenantQuota>> listTenantQuotas() override {
    ++calls;
    if (!multi_tenancy) {
      return classifyLedgerRefusal(409, readFixture(kCurrent, "ledger_list_disabled.json"),
                                   "reading the tenant ledger");
    }
    return parseTenantQuotaList(readFixture(kCurrent, "ledger_list.json"));
  }
  StoreResult<TenantQuota> getTenantQuota(std::string_view) override {
    return StoreError(StoreErrorKind::TenantNotFound, "unused");
  }
  StoreResult<TenantQuota> putTenantQuota(std::string_view, std::int64_t) override {
    return StoreError(StoreErrorKind::TenantNotFound, "unused");
  }
  StoreResult<std::optional<TenantQuota>> deleteTenantQuota(std::string_view) override {
    return StoreError(StoreErrorKind::TenantNotFound, "unused");
  }

  bool multi_tenancy = true;
  bool unreachable = false;
  int calls = 0;

private:
  std::string address_ = "127.0.0.1:9003";
};

TEST(OverviewTest, TableShowsCapacityMembersAndLedger) {
  RecordedMaster master;
  const StoreOverview overview = readOverview(master);
  EXPECT_TRUE(overviewHealthy(overview));
  const std::string table = renderOverviewTable(overview);
  EXPECT_NE(table.find("serving (service_ready)"), std::string::npos) << table;
  EXPECT_NE(table.find("128.0 MiB total (134217728 B)"), std::string::npos) << table;
  EXPECT_NE(table.find("MEMBERS: 2 segment(s), 128.0 MiB mounted"), std::string::npos) << table;
  EXPECT_NE(table.find("TENANT LEDGER: 2 tenant(s), 192.0 MiB requested, 128.0 MiB granted"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("grants are cut in proportion"), std::string::npos) << table;
  EXPECT_NE(table.find("team-a  64.0 MiB   42.7 MiB"), std::string::npos) << table;
  EXPECT_NE(table.find("USAGE (incl. in-flight)"), std::string::npos) << table;
}

TEST(OverviewTest, JsonCarriesExactFigures) {
  RecordedMaster master;
  const Json json = overviewToJson(readOverview(master));
  EXPECT_EQ(json["healthy"], true);
  EXPECT_EQ(json["capacity"]["totalBytes"], 134217728);
  EXPECT_EQ(json["capacity"]["allocatableBytes"], 134217728);
  EXPECT_EQ(json["members"]["segments"].size(), 2u);
  EXPECT_EQ(json["ledger"]["multiTenancy"], true);
  EXPECT_EQ(json["ledger"]["tenants"][0]["tenantId"], "team-a");
  EXPECT_EQ(json["ledger"]["tenants"][0]["effectiveBytes"], 44739243);
  EXPECT_EQ(json["ledger"]["tenants"][0]["occupancyBytes"], 1048576);
}

TEST(OverviewTest, MasterWithoutMultiTenancyIsStillHealthy) {
  RecordedMaster master;
  master.multi_tenancy = false;
  const StoreOverview overview = readOverview(master);
  EXPECT_TRUE(overviewHealthy(overview));
  EXPECT_NE(renderOverviewTable(overview).find("multi-tenancy is disabled"), std::string::npos);
  EXPECT_EQ(overviewToJson(overview)["ledger"]["multiTenancy"], false);
  EXPECT_TRUE(overviewToJson(overview)["capacity"]["allocatableBytes"].is_null());
}

TEST(OverviewTest, UnreachableMasterIsAskedOnce) {
  RecordedMaster master;
  master.unreachable = true;
  const StoreOverview overview = readOverview(master);
  EXPECT_EQ(master.calls, 1);
  EXPECT_FALSE(overviewHealthy(overview));
  EXPECT_NE(renderOverviewTable(overview).find("UNREADABLE: connection refused"),
            std::string::npos);
  EXPECT_EQ(overviewToJson(overview)["health"]["error"]["kind"], "Transport");
}

TEST(OverviewTest, HumanBytes) {
  EXPECT_EQ(humanBytes(0), "0 B");
  EXPECT_EQ(humanBytes(1023), "1023 B");
  EXPECT_EQ(humanBytes(1024), "1.0 KiB");
  EXPECT_EQ(humanBytes(268435456), "256.0 MiB");
  EXPECT_EQ(humanBytes(INT64_MAX), "8.0 EiB");
}

}  // namespace
}  // namespace kvc::store
