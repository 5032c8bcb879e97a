// The operator's store writes are fenced by its leadership (store/fenced_transport.h): refused
// unsent once the fence has passed, cut to it otherwise; reads pass untouched.
#include "kvc/store/fenced_transport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace kvc::store {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Answers 200 to everything; records what it was asked.
class RecordingTransport final : public HttpTransport {
public:
  StoreResult<HttpResponse> send(const HttpRequest& request) override {
    requests.push_back(request);
    return HttpResponse{200, "application/json", "{}"};
  }
  std::vector<HttpRequest> requests;
};

HttpRequest request(std::string method) {
  HttpRequest r;
  r.method = std::move(method);
  r.url = "https://kvc-leader.gpustack-system.svc:9003/api/v1/tenant_quotas/team-a";
  r.timeout = seconds(5);
  return r;
}

struct Fenced : ::testing::Test {
  FakeClock clock;
  Clock::TimePoint until = clock.now() + seconds(3);
  std::shared_ptr<RecordingTransport> inner = std::make_shared<RecordingTransport>();
  std::shared_ptr<HttpTransport> fenced = newFencedTransport(
      inner, [this] { return until; }, clock);
};

TEST_F(Fenced, AWriteBeforeTheFenceIsSentWithItsDeadlineCutToTheFence) {
  clock.advance(milliseconds(1200));
  ASSERT_TRUE(fenced->send(request("PUT")).ok());
  ASSERT_EQ(inner->requests.size(), 1u);
  EXPECT_EQ(inner->requests[0].timeout, milliseconds(1800));
  // The transport checks the fence again as the request leaves (a pause in between must not
  // end in a stale write): its not-after instant is the fence, on the real steady clock.
  ASSERT_TRUE(inner->requests[0].not_after.has_value());
  const auto to_fence = *inner->requests[0].not_after - std::chrono::steady_clock::now();
  EXPECT_GT(to_fence, milliseconds(1000));
  EXPECT_LE(to_fence, milliseconds(1800));
  until = clock.now() + seconds(30);
  ASSERT_TRUE(fenced->send(request("DELETE")).ok());
  EXPECT_EQ(inner->requests[1].timeout, seconds(5));  // its own deadline came first
}

TEST_F(Fenced, AWriteAtOrAfterTheFenceIsRefusedUnsent) {
  clock.advance(seconds(3));
  for (const char* method : {"PUT", "DELETE", "POST"}) {
    auto sent = fenced->send(request(method));
    ASSERT_TRUE(sent.is(StoreErrorKind::Fenced)) << method;
    EXPECT_EQ(sent.error().statusCode(), StatusCode::Aborted);
    EXPECT_NE(sent.error().message().find("not sent: this replica's leadership ended"),
              std::string::npos)
        << sent.error().message();
  }
  EXPECT_TRUE(inner->requests.empty());
}

TEST_F(Fenced, ReadsAreNeverFenced) {
  until = Clock::TimePoint::min();  // not leading at all
  ASSERT_TRUE(fenced->send(request("GET")).ok());
  ASSERT_EQ(inner->requests.size(), 1u);
  EXPECT_EQ(inner->requests[0].timeout, seconds(5));
}

TEST_F(Fenced, NoElectionMeansNoFence) {
  until = Clock::TimePoint::max();
  clock.advance(seconds(3600));
  ASSERT_TRUE(fenced->send(request("PUT")).ok());
  EXPECT_EQ(inner->requests[0].timeout, seconds(5));
}

}  // namespace
}  // namespace kvc::store
