// The HTTP server's internal pieces on their own: the connection slots and their eviction
// order, the body budget, the rate-limited refusal log.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "internal/body_budget.h"
#include "internal/connection_slots.h"
#include "internal/refusal_log.h"

namespace kvc::runtime {
namespace {

struct FakeConnection : Connection {
  void abort() override { aborted = true; }
  bool aborted = false;
};

TEST(ConnectionSlotsTest, EvictsNeverServedBeforeLongestWaitingAndNeverABusyOne) {
  ConnectionSlots slots(3, 0);
  auto a = std::make_shared<FakeConnection>();
  auto b = std::make_shared<FakeConnection>();
  auto c = std::make_shared<FakeConnection>();
  const auto ida = slots.admit("10.0.0.1", a).id;
  const auto idb = slots.admit("10.0.0.2", b).id;
  const auto idc = slots.admit("10.0.0.3", c).id;
  // a served a request and waits again; b never sent one; c is busy.
  ASSERT_TRUE(slots.setBusy(ida, true));
  ASSERT_TRUE(slots.setWaiting(ida));
  ASSERT_TRUE(slots.setBusy(idc, true));
  auto d = std::make_shared<FakeConnection>();
  auto first = slots.admit("10.0.0.4", d);
  EXPECT_NE(first.id, 0u);
  EXPECT_EQ(first.evicted, b);  // never served, though a waits longer
  EXPECT_EQ(first.evicted_peer, "10.0.0.2");
  EXPECT_FALSE(slots.setBusy(idb, true)) << "an evicted connection stops";
  ASSERT_TRUE(slots.setBusy(first.id, true));
  auto second = slots.admit("10.0.0.5", std::make_shared<FakeConnection>());
  EXPECT_EQ(second.evicted, a);
  ASSERT_TRUE(slots.setBusy(second.id, false));
  auto third = slots.admit("10.0.0.6", std::make_shared<FakeConnection>());
  EXPECT_EQ(third.id, 0u);
  EXPECT_EQ(third.refusal, "connections");
  slots.release(idc);
  slots.release(idb);  // evicted already: no-op
  EXPECT_EQ(slots.size(), 2u);
  EXPECT_NE(slots.admit("10.0.0.6", std::make_shared<FakeConnection>()).id, 0u);
}

TEST(ConnectionSlotsTest, APeerAtItsCapEvictsOnlyItsOwn) {
  ConnectionSlots slots(10, 2);
  auto other = std::make_shared<FakeConnection>();
  auto cx = std::make_shared<FakeConnection>();
  auto cy = std::make_shared<FakeConnection>();
  slots.admit("10.0.0.9", other);  // waiting longest, but another peer's
  const auto x = slots.admit("10.0.0.1", cx).id;
  const auto y = slots.admit("10.0.0.1", cy).id;
  ASSERT_TRUE(slots.setBusy(x, true));
  auto admitted = slots.admit("10.0.0.1", std::make_shared<FakeConnection>());
  EXPECT_NE(admitted.id, 0u);
  EXPECT_EQ(admitted.evicted, cy);
  EXPECT_EQ(admitted.evicted_peer, "10.0.0.1");
  EXPECT_FALSE(slots.setWaiting(y));
  ASSERT_TRUE(slots.setBusy(admitted.id, true));
  EXPECT_EQ(slots.admit("10.0.0.1", std::make_shared<FakeConnection>()).refusal,
            "peer_connections");
  EXPECT_NE(slots.admit("10.0.0.2", std::make_shared<FakeConnection>()).id, 0u);
}

TEST(BodyBudgetTest, TakesUpToItsCapacityAndGetsItBack) {
  BodyBudget budget(100);
  EXPECT_TRUE(budget.take(60));
  EXPECT_FALSE(budget.take(41));
  EXPECT_TRUE(budget.take(40));
  EXPECT_FALSE(budget.take(1));
  budget.give(60);
  EXPECT_EQ(budget.used(), 40u);
  EXPECT_FALSE(budget.take(static_cast<std::size_t>(-1)));  // no wrap-around
  EXPECT_TRUE(budget.take(60));
}

TEST(RefusalLogTest, LogsTheFirstFewOfASecondAndSumsTheRest) {
  std::vector<std::string> counted;
  RefusalLog log([&counted](std::string_view reason) { counted.emplace_back(reason); });
  log.setServer("127.0.0.1:9443");
  for (int i = 0; i < 1000; ++i) {
    log.refuse(i % 2 ? "connections" : "header_timeout", "10.0.0.1:" + std::to_string(i), "x");
  }
  EXPECT_EQ(counted.size(), 1000u);  // every refusal counted
  EXPECT_EQ(log.summarize(), 1000u - RefusalLog::kLoggedPerSecond);
  EXPECT_EQ(log.summarize(), 0u);  // a quiet second logs nothing
  log.refuse("connections", "10.0.0.2:1", "x");
  EXPECT_EQ(log.summarize(), 0u);  // logged on its own: a new second
}

}  // namespace
}  // namespace kvc::runtime
