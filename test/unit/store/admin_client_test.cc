#include "kvc/store/admin_client.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.h"

namespace kvc::store {
namespace {

using testing::findAnswer;
using testing::kCurrent;
using testing::readFixture;

// Replays answers by "METHOD path?query"; records every request.
class FakeTransport final : public HttpTransport {
public:
  void respond(const std::string& method, const std::string& path, int status, std::string body) {
    answers_[method + " " + path] = HttpResponse{status, "application/json", std::move(body)};
  }
  // Serves the recorded answer `name` at its recorded method and path.
  void replay(const std::string& name) {
    const auto answer = findAnswer(kCurrent, name);
    ASSERT_NE(answer.status, 0) << name;
    respond(answer.method, answer.path, answer.status, readFixture(kCurrent, name));
  }
  void failWith(StoreError error) { failure_ = std::move(error); }

  StoreResult<HttpResponse> send(const HttpRequest& request) override {
    requests.push_back(request);
    if (failure_) {
      return *failure_;
    }
    const std::string prefix = "http://127.0.0.1:9003";
    const std::string path = request.url.substr(prefix.size());
    const auto it = answers_.find(request.method + " " + path);
    if (it == answers_.end()) {
      return HttpResponse{404, "text/plain", "404 Not Found"};
    }
    return it->second;
  }

  std::vector<HttpRequest> requests;

private:
  std::map<std::string, HttpResponse> answers_;
  std::optional<StoreError> failure_;
};

class AdminClientTest : public ::testing::Test {
protected:
  void SetUp() override {
    transport_ = std::make_shared<FakeTransport>();
    AdminClientOptions options;
    options.timeout = std::chrono::milliseconds(1234);
    auto client = HttpAdminClient::create("127.0.0.1:9003", options, transport_);
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
  }

  std::shared_ptr<FakeTransport> transport_;
  std::unique_ptr<HttpAdminClient> client_;
};

TEST_F(AdminClientTest, ReadsTheRecordedMaster) {
  transport_->replay("health.json");
  transport_->replay("metrics.txt");
  transport_->replay("segments_detail.json");
  transport_->replay("ledger_list.json");
  transport_->replay("ledger_get_team_a.json");

  auto health = client_->health();
  ASSERT_TRUE(health.ok()) << health.error().message();
  EXPECT_TRUE(health->service_ready);
  auto metrics = client_->metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.error().message();
  EXPECT_EQ(metrics->total_capacity_bytes, 134217728);
  auto segments = client_->segments();
  ASSERT_TRUE(segments.ok()) << segments.error().message();
  EXPECT_EQ(segments->capacityBytes(), 134217728);
  auto ledger = client_->listTenantQuotas();
  ASSERT_TRUE(ledger.ok()) << ledger.error().message();
  EXPECT_EQ(ledger->size(), 2u);
  auto entry = client_->getTenantQuota("team-a");
  ASSERT_TRUE(entry.ok()) << entry.error().message();
  EXPECT_EQ(entry->charged_bytes, 1048576);

  for (const HttpRequest& request : transport_->requests) {
    EXPECT_EQ(request.method, "GET");
    EXPECT_EQ(request.timeout, std::chrono::milliseconds(1234));
    EXPECT_EQ(request.max_body_bytes, kDefaultMaxBodyBytes);
  }
}

TEST_F(AdminClientTest, PutSendsTheRequestedBytesAsJson) {
  transport_->replay("ledger_put_team_b.json");
  auto entry = client_->putTenantQuota("team-b", 134217728);
  ASSERT_TRUE(entry.ok()) << entry.error().message();
  EXPECT_EQ(entry->effective_quota_bytes, 89478485);
  ASSERT_EQ(transport_->requests.size(), 1u);
  const HttpRequest& request = transport_->requests[0];
  EXPECT_EQ(request.method, "PUT");
  EXPECT_EQ(request.url, "http://127.0.0.1:9003/api/v1/tenant_quotas?tenant_id=team-b");
  EXPECT_EQ(request.content_type, "application/json");
  EXPECT_EQ(request.body, R"({"requested_quota_bytes":134217728})");
}

TEST_F(AdminClientTest, RefusalsAreTyped) {
  transport_->replay("ledger_get_unknown.json");
  transport_->replay("ledger_delete_not_empty.json");
  transport_->replay("ledger_put_zero.json");
  transport_->replay("ledger_put_persist_fail.json");  // same route as put_zero: replaces it

  EXPECT_TRUE(client_->getTenantQuota("nobody").is(StoreErrorKind::TenantNotFound));
  EXPECT_TRUE(client_->deleteTenantQuota("team-a").is(StoreErrorKind::TenantNotEmpty));
  auto put = client_->putTenantQuota("team-c", 1024);
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().kind(), StoreErrorKind::PersistFailed);
  EXPECT_EQ(put.error().httpStatus(), 500);
  EXPECT_EQ(put.error().errorCode(), kErrPersistentFail);
  EXPECT_NE(put.error().message().find("writing the quota of reuse domain \"team-c\""),
            std::string::npos)
      << put.error().message();
}

TEST_F(AdminClientTest, DisabledMultiTenancyIsTypedOnEveryLedgerCall) {
  const std::string body = readFixture(kCurrent, "ledger_list_disabled.json");
  transport_->respond("GET", "/api/v1/tenant_quotas", 409, body);
  transport_->respond("GET", "/api/v1/tenant_quotas?tenant_id=a", 409, body);
  transport_->respond("PUT", "/api/v1/tenant_quotas?tenant_id=a", 409, body);
  transport_->respond("DELETE", "/api/v1/tenant_quotas?tenant_id=a", 409, body);
  EXPECT_TRUE(client_->listTenantQuotas().is(StoreErrorKind::MultiTenancyDisabled));
  EXPECT_TRUE(client_->getTenantQuota("a").is(StoreErrorKind::MultiTenancyDisabled));
  EXPECT_TRUE(client_->putTenantQuota("a", 1).is(StoreErrorKind::MultiTenancyDisabled));
  EXPECT_TRUE(client_->deleteTenantQuota("a").is(StoreErrorKind::MultiTenancyDisabled));
}

TEST_F(AdminClientTest, EmptyTenantIdIsRefusedBeforeSending) {
  // The master would answer a GET with an empty tenant_id with the whole list.
  EXPECT_TRUE(client_->getTenantQuota("").is(StoreErrorKind::InvalidParams));
  EXPECT_TRUE(client_->putTenantQuota("", 5).is(StoreErrorKind::InvalidParams));
  EXPECT_TRUE(client_->deleteTenantQuota("").is(StoreErrorKind::InvalidParams));
  EXPECT_TRUE(transport_->requests.empty());
}

TEST_F(AdminClientTest, TenantIdsArePercentEncoded) {
  static_cast<void>(client_->getTenantQuota("a b&c=d/ü"));
  ASSERT_EQ(transport_->requests.size(), 1u);
  EXPECT_EQ(transport_->requests[0].url,
            "http://127.0.0.1:9003/api/v1/tenant_quotas?tenant_id=a%20b%26c%3Dd%2F%C3%BC");
}

TEST_F(AdminClientTest, ABare404OnTheLedgerIsNeverAnAbsentTenant) {
  // Nothing is registered in the fake: every route answers a bare 404.
  auto entry = client_->getTenantQuota("team-a");
  ASSERT_FALSE(entry.ok());
  EXPECT_EQ(entry.error().kind(), StoreErrorKind::RouteNotServed);
  EXPECT_TRUE(client_->deleteTenantQuota("team-a").is(StoreErrorKind::RouteNotServed));
}

TEST_F(AdminClientTest, ServiceRoutesAnswering503AreInactive) {
  transport_->respond("GET", "/metrics", 503, "service plane is not active");
  transport_->respond("GET", "/get_segments_detail", 503, "");
  transport_->respond("GET", "/api/v1/tenant_quotas", 503,
                      R"({"success":false,"error_code":-1011,"error_message":"x"})");
  EXPECT_TRUE(client_->metrics().is(StoreErrorKind::ServicePlaneInactive));
  EXPECT_TRUE(client_->segments().is(StoreErrorKind::ServicePlaneInactive));
  EXPECT_TRUE(client_->listTenantQuotas().is(StoreErrorKind::ServicePlaneInactive));
}

TEST_F(AdminClientTest, OtherStatusesAreUnexpectedWithAShortExcerpt) {
  transport_->respond("GET", "/health", 503, std::string(3000, 'h'));
  transport_->respond("GET", "/metrics", 302, "moved");
  auto health = client_->health();
  ASSERT_FALSE(health.ok());
  EXPECT_EQ(health.error().kind(), StoreErrorKind::UnexpectedStatus);
  EXPECT_EQ(health.error().message().rfind("request /health: unexpected status 503: ", 0), 0u);
  EXPECT_LT(health.error().message().size(), 600u);
  EXPECT_TRUE(client_->metrics().is(StoreErrorKind::UnexpectedStatus));
  // An old master without the listing route.
  EXPECT_TRUE(client_->segments().is(StoreErrorKind::RouteNotServed));
}

TEST_F(AdminClientTest, TransportFailuresKeepTheirKind) {
  transport_->failWith(StoreError(StoreErrorKind::DeadlineExceeded, "slow"));
  EXPECT_TRUE(client_->health().is(StoreErrorKind::DeadlineExceeded));
  EXPECT_TRUE(client_->listTenantQuotas().is(StoreErrorKind::DeadlineExceeded));
}

TEST(AdminAddressTest, HostAndPortOnly) {
  for (const char* good :
       {"127.0.0.1:9003", "mc-leader.gpustack-system.svc:9003", "[::1]:9003", "h:1", "h:65535"}) {
    EXPECT_TRUE(validateAdminAddress(good).ok()) << good;
  }
  for (const char* bad : {"", "127.0.0.1", ":9003", "h:0", "h:65536", "h:x", "http://h:9003",
                          "h:9003/metrics", "h :9003", "::1:9003", "[::1]", "user@h:1"}) {
    EXPECT_FALSE(validateAdminAddress(bad).ok()) << bad;
  }
  EXPECT_FALSE(HttpAdminClient::create("nope").ok());
}

}  // namespace
}  // namespace kvc::store
