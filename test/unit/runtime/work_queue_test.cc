// The work queue keeps client-go's contract; delays run on a fake clock.
#include "kvc/runtime/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace kvc::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::unique_ptr<RateLimiter> itemLimiter() {
  return std::make_unique<ItemExponentialFailureRateLimiter>(milliseconds(5), seconds(1000));
}

TEST(WorkQueueTest, ItemsComeOutInOrderAndDuplicatesCollapse) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  q.add("a");
  q.add("b");
  q.add("a");
  EXPECT_EQ(q.len(), 2U);
  EXPECT_EQ(q.get(), "a");
  EXPECT_EQ(q.get(), "b");
  EXPECT_EQ(q.stats().adds, 2U);
}

TEST(WorkQueueTest, AnItemBeingProcessedIsNotHandedOutTwice) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  q.add("a");
  ASSERT_EQ(q.get(), "a");
  q.add("a");  // re-added while processing: dirty, but not queued
  EXPECT_EQ(q.len(), 0U);
  EXPECT_EQ(q.getUntil(clock.now()), std::nullopt);
  q.add("a");   // still once
  q.done("a");  // now it is queued again, once
  EXPECT_EQ(q.len(), 1U);
  EXPECT_EQ(q.get(), "a");
  q.done("a");
  EXPECT_EQ(q.len(), 0U);
  EXPECT_EQ(q.processingLen(), 0U);
}

TEST(WorkQueueTest, DoneWithoutReAddDropsTheItem) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  q.add("a");
  ASSERT_EQ(q.get(), "a");
  q.done("a");
  EXPECT_EQ(q.len(), 0U);
}

TEST(WorkQueueTest, DelayedItemsAppearWhenTheirTimeComes) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  q.addAfter("late", seconds(10));
  q.addAfter("early", seconds(2));
  EXPECT_EQ(q.len(), 0U);
  EXPECT_EQ(q.delayedLen(), 2U);
  clock.advance(seconds(2));
  EXPECT_EQ(q.len(), 1U);
  EXPECT_EQ(q.get(), "early");
  clock.advance(seconds(8));
  EXPECT_EQ(q.get(), "late");
}

TEST(WorkQueueTest, TheEarliestOfSeveralDelaysWins) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  q.addAfter("a", seconds(10));
  q.addAfter("a", seconds(3));
  q.addAfter("a", seconds(20));  // later than what is already waiting: ignored
  EXPECT_EQ(q.delayedLen(), 1U);
  clock.advance(seconds(3));
  EXPECT_EQ(q.len(), 1U);
  EXPECT_EQ(q.get(), "a");
  q.done("a");
  clock.advance(seconds(30));
  EXPECT_EQ(q.len(), 0U);
}

TEST(WorkQueueTest, ADelayedItemAlreadyQueuedIsNotDuplicated) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  q.add("a");
  q.addAfter("a", seconds(1));
  clock.advance(seconds(1));
  EXPECT_EQ(q.len(), 1U);
}

TEST(WorkQueueTest, ABlockedGetWakesWhenTheDelayPassesOnTheFakeClock) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  q.addAfter("a", seconds(5));
  std::optional<std::string> got;
  std::thread getter([&] { got = q.get(); });
  while (clock.waiters() == 0) {
    std::this_thread::yield();
  }
  clock.advance(seconds(5));
  getter.join();
  EXPECT_EQ(got, "a");
}

TEST(WorkQueueTest, RateLimitedAddsBackOffPerItemUntilForgotten) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  q.addRateLimited("a");  // 5 ms
  EXPECT_EQ(q.len(), 0U);
  clock.advance(milliseconds(5));
  ASSERT_EQ(q.get(), "a");
  q.done("a");
  q.addRateLimited("a");  // 10 ms
  clock.advance(milliseconds(9));
  EXPECT_EQ(q.len(), 0U);
  clock.advance(milliseconds(1));
  EXPECT_EQ(q.len(), 1U);
  EXPECT_EQ(q.numRequeues("a"), 2);
  EXPECT_EQ(q.stats().retries, 2U);
  q.forget("a");
  EXPECT_EQ(q.numRequeues("a"), 0);
}

TEST(WorkQueueTest, ShutDownDrainsQueuedItemsThenEnds) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  q.add("a");
  q.addAfter("delayed", seconds(1));
  q.shutDown();
  q.add("b");  // refused
  EXPECT_TRUE(q.shuttingDown());
  EXPECT_EQ(q.get(), "a");
  EXPECT_EQ(q.get(), std::nullopt);
  clock.advance(seconds(1));
  EXPECT_EQ(q.get(), std::nullopt);  // delayed items are dropped at shutdown
}

TEST(WorkQueueTest, ShutDownWakesBlockedGetters) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  std::atomic<int> ended{0};
  std::vector<std::thread> getters;
  for (int i = 0; i < 3; ++i) {
    getters.emplace_back([&] {
      if (!q.get()) {
        ++ended;
      }
    });
  }
  while (clock.waiters() < 3) {
    std::this_thread::yield();
  }
  q.shutDown();
  for (auto& t : getters) {
    t.join();
  }
  EXPECT_EQ(ended, 3);
}

TEST(WorkQueueTest, ShutDownWithDrainWaitsForItemsInProcessing) {
  FakeClock clock;
  WorkQueue q("t", itemLimiter(), clock);
  q.add("a");
  ASSERT_EQ(q.get(), "a");
  std::atomic<bool> drained{false};
  std::thread drainer([&] {
    q.shutDownWithDrain();
    drained = true;
  });
  while (!q.shuttingDown()) {
    std::this_thread::yield();
  }
  EXPECT_FALSE(drained);
  q.done("a");
  drainer.join();
  EXPECT_TRUE(drained);
}

TEST(WorkQueueTest, ConcurrentWorkersNeverHoldTheSameKey) {
  WorkQueue q("t", itemLimiter(), realClock());
  std::mutex mutex;
  std::set<std::string> held;
  std::atomic<bool> overlap{false};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto item = q.get()) {
        {
          std::lock_guard<std::mutex> guard(mutex);
          if (!held.insert(*item).second) {
            overlap = true;
          }
        }
        std::this_thread::yield();
        {
          std::lock_guard<std::mutex> guard(mutex);
          held.erase(*item);
        }
        ++processed;
        q.done(*item);
      }
    });
  }
  for (int round = 0; round < 200; ++round) {
    for (int k = 0; k < 5; ++k) {
      q.add("key-" + std::to_string(k));
    }
  }
  q.shutDownWithDrain();
  for (auto& t : workers) {
    t.join();
  }
  EXPECT_FALSE(overlap);
  EXPECT_GE(processed.load(), 5);
}

}  // namespace
}  // namespace kvc::runtime
