// Events: created once, aggregated into a series, rate-limited per object.
#include "kvc/runtime/events.h"
#include "kvc/kube/time.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "eventually.h"
#include "fake_apiserver.h"

namespace kvc::runtime {
namespace {

using testing::FakeApiServer;
using testing::FakeRequest;
using testing::ResponseWriter;

const Json kBinding = Json::parse(R"({"apiVersion":"worker.gpustack.ai/v1",
    "kind":"KVCachePoolBinding","metadata":{"name":"b","namespace":"team-a","uid":"u-1",
    "resourceVersion":"7"}})");
const Json kPool = Json::parse(R"({"apiVersion":"worker.gpustack.ai/v1","kind":"KVCachePool",
    "metadata":{"name":"p","uid":"u-2"}})");

class EventsTest : public ::testing::Test {
protected:
  EventsTest() {
    server_.setHandler([](const FakeRequest& r, ResponseWriter& out) {
      out.respond(r.method == "POST" ? 201 : 200, r.body);
    });
    EventRecorderOptions o;
    o.reporting_instance = "replica-1";
    o.flush_period = std::chrono::seconds(30);
    recorder_ = std::make_unique<EventRecorder>(*kube::Client::create(server_.config()), o, clock_);
    recorder_->start();
  }
  std::vector<FakeRequest> requests() {
    recorder_->flushForTest();
    return server_.requests();
  }

  FakeApiServer server_;
  FakeClock clock_;
  std::unique_ptr<EventRecorder> recorder_;
};

TEST_F(EventsTest, AnEventIsCreatedWithTheV1Shape) {
  recorder_->event(kBinding, EventType::Warning, "PoolNotFound", "Bind",
                   "pool shared-dram does not exist");
  const auto r = requests();
  ASSERT_EQ(r.size(), 1U);
  EXPECT_EQ(r[0].method, "POST");
  EXPECT_EQ(r[0].path, "/apis/events.k8s.io/v1/namespaces/team-a/events");
  const Json e = Json::parse(r[0].body);
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["reason"], "PoolNotFound");
  EXPECT_EQ(e["action"], "Bind");
  EXPECT_EQ(e["note"], "pool shared-dram does not exist");
  EXPECT_EQ(e["reportingController"], "kvcache-operator");
  EXPECT_EQ(e["reportingInstance"], "replica-1");
  EXPECT_EQ(e["regarding"], Json::parse(R"({"apiVersion":"worker.gpustack.ai/v1",
      "kind":"KVCachePoolBinding","namespace":"team-a","name":"b","uid":"u-1",
      "resourceVersion":"7"})"));
  EXPECT_EQ(e["eventTime"], kube::formatMicroTime(clock_.wallNow()));
  EXPECT_EQ(e["metadata"]["name"].get<std::string>().rfind("b.", 0), 0U);
}

TEST_F(EventsTest, ClusterScopedObjectsReportInTheDefaultNamespace) {
  recorder_->event(kPool, EventType::Normal, "Ready", "Reconcile", "ok");
  EXPECT_EQ(requests().at(0).path, "/apis/events.k8s.io/v1/namespaces/default/events");
}

TEST_F(EventsTest, RepeatsBecomeOneSeriesPatchedOnFlush) {
  recorder_->event(kBinding, EventType::Warning, "QuotaExceeded", "Bind", "over by 1Gi");
  recorder_->event(kBinding, EventType::Warning, "QuotaExceeded", "Bind", "over by 1Gi");
  auto r = requests();
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[1].method, "PATCH");
  EXPECT_EQ(r[1].headers.at("content-type"), "application/merge-patch+json");
  EXPECT_EQ(Json::parse(r[1].body)["series"]["count"], 2);
  for (int i = 0; i < 5; ++i) {
    recorder_->event(kBinding, EventType::Warning, "QuotaExceeded", "Bind", "over by 1Gi");
  }
  EXPECT_EQ(requests().size(), 2U);  // counted in memory only
  clock_.advance(std::chrono::seconds(30));
  ASSERT_TRUE(testing::eventually([&] { return server_.requestCount() >= 3; }));
  EXPECT_EQ(server_.requestCount(), 3U);
  EXPECT_EQ(Json::parse(server_.requests()[2].body)["series"]["count"], 7);
  EXPECT_EQ(recorder_->stats().aggregated, 6U);
}

TEST_F(EventsTest, DifferentNotesAreDifferentEvents) {
  recorder_->event(kBinding, EventType::Normal, "Bound", "Bind", "a");
  recorder_->event(kBinding, EventType::Normal, "Bound", "Bind", "b");
  const auto r = requests();
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].method, "POST");
  EXPECT_EQ(r[1].method, "POST");
}

TEST_F(EventsTest, AFinishedSeriesStartsANewEvent) {
  recorder_->event(kBinding, EventType::Normal, "Bound", "Bind", "a");
  requests();
  clock_.advance(std::chrono::minutes(7));
  recorder_->event(kBinding, EventType::Normal, "Bound", "Bind", "a");
  const auto r = requests();
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[1].method, "POST");
}

TEST_F(EventsTest, EachObjectHasABurstOf25ThenOnePerFiveMinutes) {
  for (int i = 0; i < 30; ++i) {
    recorder_->event(kBinding, EventType::Normal, "Step", "Reconcile", std::to_string(i));
  }
  EXPECT_EQ(requests().size(), 25U);
  EXPECT_EQ(recorder_->stats().dropped_rate_limited, 5U);
  recorder_->event(kPool, EventType::Normal, "Step", "Reconcile", "other object");
  EXPECT_EQ(requests().size(), 26U);
  clock_.advance(std::chrono::minutes(5));
  recorder_->event(kBinding, EventType::Normal, "Step", "Reconcile", "refilled");
  EXPECT_EQ(requests().size(), 27U);
}

TEST_F(EventsTest, LongNotesAreCut) {
  recorder_->event(kBinding, EventType::Normal, "Long", "Bind", std::string(5000, 'x'));
  EXPECT_EQ(Json::parse(requests().at(0).body)["note"].get<std::string>().size(), 1024U);
}

TEST_F(EventsTest, ARecurringWarningIsCreatedAgainAfterAFailedCreate) {
  // The first create fails (the API server was unavailable). Repeats within the series window
  // must not be counted onto an Event that never existed: the next one creates it.
  std::atomic<int> posts{0};
  server_.setHandler([&](const FakeRequest& r, ResponseWriter& out) {
    if (r.method == "POST" && posts++ == 0) {
      out.respond(503, testing::statusBody(503, "ServiceUnavailable", "try again"));
      return;
    }
    out.respond(r.method == "POST" ? 201 : 200, r.body);
  });
  recorder_->event(kBinding, EventType::Warning, "LedgerUnreachable", "Reconcile", "down");
  recorder_->flushForTest();
  recorder_->event(kBinding, EventType::Warning, "LedgerUnreachable", "Reconcile", "down");
  const auto r = requests();
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].method, "POST");
  EXPECT_EQ(r[1].method, "POST");  // a new Event, not a PATCH of the one that failed
  EXPECT_EQ(Json::parse(r[1].body)["reason"], "LedgerUnreachable");
  EXPECT_EQ(recorder_->stats().failed, 1U);
  EXPECT_EQ(recorder_->stats().created, 1U);
}

}  // namespace
}  // namespace kvc::runtime
