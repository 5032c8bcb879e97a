#include "kvc/store/ledger.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.h"
#include "kvc/common/json.h"

namespace kvc::store {
namespace {

using testing::findAnswer;
using testing::kCurrent;
using testing::kLegacy;
using testing::readFixture;

TEST(LedgerTest, RecordedListOf0313UsesChargedBytes) {
  auto list = parseTenantQuotaList(readFixture(kCurrent, "ledger_list.json"));
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list->size(), 2u);
  const TenantQuota& a = (*list)[0];
  EXPECT_EQ(a.tenant_id, "team-a");
  EXPECT_EQ(a.requested_quota_bytes, 67108864);
  EXPECT_EQ(a.effective_quota_bytes, 44739243);
  EXPECT_TRUE(a.has_explicit_policy);
  EXPECT_FALSE(a.over_quota);
  EXPECT_EQ(a.charged_bytes, 1048576);
  EXPECT_EQ(a.admission_closed, false);
  EXPECT_FALSE(a.used_bytes.has_value());
  EXPECT_EQ(a.occupancyBytes(), 1048576);
  EXPECT_EQ((*list)[1].tenant_id, "team-b");
  EXPECT_EQ((*list)[1].effective_quota_bytes, 89478485);
}

TEST(LedgerTest, RecordedListOf0312UsesUsedBytes) {
  auto list = parseTenantQuotaList(readFixture(kLegacy, "ledger_list.json"));
  ASSERT_TRUE(list.ok()) << list.error().message();
  const TenantQuota& a = (*list)[0];
  EXPECT_EQ(a.used_bytes, 1048576);
  EXPECT_EQ(a.reserved_bytes, 0);
  EXPECT_EQ(a.committed_count, 1);
  EXPECT_EQ(a.metadata_object_count, 1);
  EXPECT_FALSE(a.charged_bytes.has_value());
  EXPECT_FALSE(a.admission_closed.has_value());
  EXPECT_EQ(a.occupancyBytes(), 1048576);
}

TEST(LedgerTest, RecordedEntriesOfEveryRoute) {
  for (const char* version : {kCurrent, kLegacy}) {
    auto empty = parseTenantQuotaList(readFixture(version, "ledger_list_empty.json"));
    ASSERT_TRUE(empty.ok()) << version;
    EXPECT_TRUE(empty->empty());

    auto put = parseTenantQuotaEntry(readFixture(version, "ledger_put_team_a.json"));
    ASSERT_TRUE(put.ok()) << version << ": " << put.error().message();
    EXPECT_EQ(put->effective_quota_bytes, 67108864) << "64 MiB fits in 128 MiB";

    auto recut = parseTenantQuotaEntry(readFixture(version, "ledger_put_team_b.json"));
    ASSERT_TRUE(recut.ok()) << version;
    EXPECT_EQ(recut->requested_quota_bytes, 134217728);
    EXPECT_EQ(recut->effective_quota_bytes, 89478485);

    auto get = parseTenantQuotaEntry(readFixture(version, "ledger_get_team_a.json"));
    ASSERT_TRUE(get.ok()) << version;
    EXPECT_EQ(get->tenant_id, "team-a");

    auto deleted = parseTenantQuotaDeleted(readFixture(version, "ledger_delete_team_b.json"));
    ASSERT_TRUE(deleted.ok()) << version;
    EXPECT_FALSE(deleted->has_value()) << "a clean delete answers data: null";
  }
}

TEST(LedgerTest, EveryRecordedRefusalMapsToItsOwnKind) {
  const std::map<std::string, StoreErrorKind> expected = {
      {"ledger_list_disabled.json", StoreErrorKind::MultiTenancyDisabled},
      {"ledger_put_disabled.json", StoreErrorKind::MultiTenancyDisabled},
      {"ledger_get_unknown.json", StoreErrorKind::TenantNotFound},
      {"ledger_delete_unknown.json", StoreErrorKind::TenantNotFound},
      {"ledger_put_zero.json", StoreErrorKind::InvalidParams},
      {"ledger_put_bad_json.json", StoreErrorKind::InvalidParams},
      {"ledger_put_reserved_name.json", StoreErrorKind::InvalidParams},
      {"ledger_put_no_tenant.json", StoreErrorKind::InvalidParams},
      {"ledger_delete_not_empty.json", StoreErrorKind::TenantNotEmpty},
      {"ledger_put_persist_fail.json", StoreErrorKind::PersistFailed},
      {"route_post_not_found.txt", StoreErrorKind::RouteNotServed},
      {"route_unknown.txt", StoreErrorKind::RouteNotServed},
  };
  for (const char* version : {kCurrent, kLegacy}) {
    for (const auto& [name, kind] : expected) {
      const auto answer = findAnswer(version, name);
      ASSERT_NE(answer.status, 0) << version << "/" << name << " is not in index.tsv";
      const StoreError error =
          classifyLedgerRefusal(answer.status, readFixture(version, name), "testing");
      EXPECT_EQ(error.kind(), kind) << version << "/" << name << ": " << error.message();
      EXPECT_EQ(error.httpStatus(), answer.status);
    }
  }
}

TEST(LedgerTest, TooLargeQuotaIsRefusedBy0313) {
  const auto answer = findAnswer(kCurrent, "ledger_put_too_large.json");
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(
      classifyLedgerRefusal(answer.status, readFixture(kCurrent, "ledger_put_too_large.json"), "t")
          .kind(),
      StoreErrorKind::InvalidParams);
}

TEST(LedgerTest, AnEntryPastInt64FromAn0312MasterIsMalformed) {
  // 0.3.12.post1 accepted a PUT of 2^63 and echoes it back; no int64 holds it.
  EXPECT_EQ(findAnswer(kLegacy, "ledger_put_too_large.json").status, 200);
  auto entry = parseTenantQuotaEntry(readFixture(kLegacy, "ledger_put_too_large.json"));
  ASSERT_FALSE(entry.ok());
  EXPECT_EQ(entry.error().kind(), StoreErrorKind::MalformedBody);
}

TEST(LedgerTest, ClassificationIgnoresMessageText) {
  // The codes decide; the messages are swapped on purpose.
  EXPECT_EQ(
      classifyLedgerRefusal(
          404, R"({"success":false,"error_code":-704,"error_message":"TENANT_NOT_EMPTY"})", "t")
          .kind(),
      StoreErrorKind::TenantNotFound);
  EXPECT_EQ(
      classifyLedgerRefusal(
          409, R"({"success":false,"error_code":-1702,"error_message":"OBJECT_NOT_FOUND"})", "t")
          .kind(),
      StoreErrorKind::TenantNotEmpty);
}

TEST(LedgerTest, StatusAndCodeMustBothMatch) {
  // 503 is "not serving" whatever the code (an HA standby answers -1011 too).
  EXPECT_EQ(
      classifyLedgerRefusal(503, R"({"success":false,"error_code":-1011,"error_message":"x"})", "t")
          .kind(),
      StoreErrorKind::ServicePlaneInactive);
  EXPECT_EQ(classifyLedgerRefusal(503, "", "t").kind(), StoreErrorKind::ServicePlaneInactive);
  // A 404 is "absent" only with -704: -1701 (a data-plane code) is an error.
  const StoreError unregistered = classifyLedgerRefusal(
      404, R"({"success":false,"error_code":-1701,"error_message":"TENANT_NOT_REGISTERED"})", "t");
  EXPECT_EQ(unregistered.kind(), StoreErrorKind::UnexpectedStatus);
  EXPECT_EQ(unregistered.errorCode(), kErrTenantNotRegistered);
  // An HTML 404 is a route that is not served.
  EXPECT_EQ(classifyLedgerRefusal(404, "<html><body>Not Found</body></html>", "t").kind(),
            StoreErrorKind::RouteNotServed);
  // Known codes under the wrong status.
  EXPECT_EQ(
      classifyLedgerRefusal(500, R"({"success":false,"error_code":-704,"error_message":"x"})", "t")
          .kind(),
      StoreErrorKind::UnexpectedStatus);
  EXPECT_EQ(
      classifyLedgerRefusal(409, R"({"success":false,"error_code":-9999,"error_message":"x"})", "t")
          .kind(),
      StoreErrorKind::UnexpectedStatus);
  EXPECT_EQ(classifyLedgerRefusal(500, "", "t").kind(), StoreErrorKind::UnexpectedStatus);
  EXPECT_EQ(
      classifyLedgerRefusal(409, R"({"success":false,"error_code":-1010,"error_message":"x"})", "t")
          .kind(),
      StoreErrorKind::TransientState);
}

TEST(LedgerTest, RefusalMessagesNameTheActionAndQuoteTheBodyBriefly) {
  const std::string body =
      R"({"success":false,"error_code":-1702,"error_message":")" + std::string(2000, 'x') + "\"}";
  const StoreError error = classifyLedgerRefusal(409, body, "removing the quota of tenant t");
  EXPECT_EQ(error.message().rfind("removing the quota of tenant t: ", 0), 0u);
  EXPECT_LT(error.message().size(), 800u);
  // TENANT_NOT_EMPTY heals without a watch event (the objects expire): retried with backoff.
  EXPECT_EQ(error.status().code(), StatusCode::Unavailable);
}

StoreErrorKind entryFailure(const std::string& body) {
  auto entry = parseTenantQuotaEntry(body);
  EXPECT_FALSE(entry.ok()) << body;
  return entry.ok() ? StoreErrorKind::Transport : entry.error().kind();
}

TEST(LedgerTest, MalformedEntries) {
  const Json good = {{"tenant_id", "a"},
                     {"requested_quota_bytes", 1},
                     {"effective_quota_bytes", 1},
                     {"over_quota", false},
                     {"has_explicit_policy", true}};
  auto wrap = [](const Json& data) { return Json{{"success", true}, {"data", data}}.dump(); };
  EXPECT_TRUE(parseTenantQuotaEntry(wrap(good)).ok());

  for (const char* body :
       {"not json", "[]", R"({"data":{}})", R"({"success":false,"data":{}})", R"({"success":true})",
        R"({"success":true,"data":null})", R"({"success":true,"data":[]})"}) {
    EXPECT_EQ(entryFailure(body), StoreErrorKind::MalformedBody) << body;
  }
  const std::vector<std::pair<std::string, Json>> broken_fields = {
      {"tenant_id", ""},
      {"tenant_id", nullptr},
      {"requested_quota_bytes", nullptr},
      {"requested_quota_bytes", -1},
      {"requested_quota_bytes", 1.5},
      {"effective_quota_bytes", "1"},
      {"over_quota", "no"},
      {"has_explicit_policy", nullptr},
      {"charged_bytes", "1"},
      {"admission_closed", 0},
  };
  for (const auto& [field, value] : broken_fields) {
    Json entry = good;
    entry[field] = value;
    EXPECT_EQ(entryFailure(wrap(entry)), StoreErrorKind::MalformedBody)
        << field << "=" << value.dump();
  }
}

TEST(LedgerTest, ListRulesAndDeleteShapes) {
  EXPECT_FALSE(parseTenantQuotaList(R"({"success":true,"data":{}})").ok());
  EXPECT_FALSE(parseTenantQuotaList(R"({"success":true,"data":null})").ok());
  const std::string entry =
      R"({"tenant_id":"a","requested_quota_bytes":1,"effective_quota_bytes":1,)"
      R"("over_quota":false,"has_explicit_policy":true})";
  auto twice = parseTenantQuotaList(R"({"success":true,"data":[)" + entry + "," + entry + "]}");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().kind(), StoreErrorKind::MalformedBody);

  auto absent = parseTenantQuotaDeleted(R"({"success":true})");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  auto with_entry = parseTenantQuotaDeleted(R"({"success":true,"data":)" + entry + "}");
  ASSERT_TRUE(with_entry.ok());
  ASSERT_TRUE(with_entry->has_value());
  EXPECT_EQ((*with_entry)->tenant_id, "a");
}

// Found by test/fuzz/fuzz_ledger: a body that is not JSON was quoted byte for byte, and a
// message that is not UTF-8 cannot be written into a status condition (dump() throws).
TEST(LedgerTest, MessagesStayUtf8WhateverTheBody) {
  const std::string body = "{\"success\": true, \"data\": [\x8d\xc3(]}";
  auto list = parseTenantQuotaList(body);
  ASSERT_FALSE(list.ok());
  EXPECT_NO_THROW((void)Json(list.error().message()).dump()) << list.error().message();
  const StoreError refusal = classifyLedgerRefusal(500, body, "reading the tenant ledger");
  EXPECT_NO_THROW((void)Json(refusal.message()).dump()) << refusal.message();
}

// Found by test/fuzz/fuzz_ledger: an answer holding an object of 20,000 keys took seconds to
// parse (an ordered object scanned every key on each insert); 200,000 now take milliseconds.
TEST(LedgerTest, WideAnswersParseInLinearTime) {
  std::string data = "{";
  for (int i = 0; i < 200000; ++i) {
    data += (i > 0 ? ",\"k" : "\"k") + std::to_string(i) + "\": 0";
  }
  data += "}";
  const auto start = std::chrono::steady_clock::now();
  auto entry = parseTenantQuotaEntry(R"({"success": true, "data": )" + data + "}");
  EXPECT_FALSE(entry.ok());  // no tenant_id
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace kvc::store
