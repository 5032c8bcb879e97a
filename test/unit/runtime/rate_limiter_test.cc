// client-go's rate limiters, on a fake clock.
#include "kvc/runtime/rate_limiter.h"

#include <gtest/gtest.h>

#include "kvc/runtime/backoff.h"

namespace kvc::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ItemExponentialFailureRateLimiterTest, DoublesPerFailureUpToTheCap) {
  ItemExponentialFailureRateLimiter limiter(milliseconds(5), seconds(1000));
  EXPECT_EQ(limiter.when("a"), milliseconds(5));
  EXPECT_EQ(limiter.when("a"), milliseconds(10));
  EXPECT_EQ(limiter.when("a"), milliseconds(20));
  EXPECT_EQ(limiter.when("b"), milliseconds(5));  // items are independent
  EXPECT_EQ(limiter.numRequeues("a"), 3);
  for (int i = 0; i < 30; ++i) {
    static_cast<void>(limiter.when("a"));
  }
  EXPECT_EQ(limiter.when("a"), seconds(1000));
  // 2^60 and beyond must not overflow.
  for (int i = 0; i < 100; ++i) {
    static_cast<void>(limiter.when("a"));
  }
  EXPECT_EQ(limiter.when("a"), seconds(1000));
  limiter.forget("a");
  EXPECT_EQ(limiter.numRequeues("a"), 0);
  EXPECT_EQ(limiter.when("a"), milliseconds(5));
}

TEST(BucketRateLimiterTest, BurstThenOneTokenPerTenthOfASecond) {
  FakeClock clock;
  BucketRateLimiter limiter(10.0, 100, clock);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(limiter.when("x"), Clock::Duration::zero()) << i;
  }
  // The bucket is empty: each further item reserves the next token.
  EXPECT_EQ(limiter.when("x"), milliseconds(100));
  EXPECT_EQ(limiter.when("y"), milliseconds(200));
  EXPECT_EQ(limiter.when("z"), milliseconds(300));
  // Time refills the bucket (and pays back the reservations first).
  clock.advance(milliseconds(300));
  EXPECT_EQ(limiter.when("x"), milliseconds(100));
  clock.advance(seconds(60));
  EXPECT_EQ(limiter.when("x"), Clock::Duration::zero());
}

TEST(MaxOfRateLimiterTest, DefaultControllerLimiterTakesTheLongerWait) {
  FakeClock clock;
  auto limiter = defaultControllerRateLimiter(clock);
  // Per-item backoff dominates while the bucket has tokens.
  EXPECT_EQ(limiter->when("a"), milliseconds(5));
  EXPECT_EQ(limiter->when("a"), milliseconds(10));
  EXPECT_EQ(limiter->numRequeues("a"), 2);
  // Drain the bucket with other items: the bucket then dominates for a fresh item.
  for (int i = 0; i < 98; ++i) {
    static_cast<void>(limiter->when("other-" + std::to_string(i)));
  }
  EXPECT_EQ(limiter->when("fresh"), milliseconds(100));
  limiter->forget("a");
  EXPECT_EQ(limiter->numRequeues("a"), 0);
}

TEST(BackoffTest, GrowsToItsCapAndResets) {
  Backoff backoff(milliseconds(800), seconds(30), 2.0, 0.0);
  EXPECT_EQ(backoff.next(), milliseconds(800));
  EXPECT_EQ(backoff.next(), milliseconds(1600));
  EXPECT_EQ(backoff.next(), milliseconds(3200));
  for (int i = 0; i < 10; ++i) {
    static_cast<void>(backoff.next());
  }
  EXPECT_EQ(backoff.next(), seconds(30));
  backoff.reset();
  EXPECT_EQ(backoff.next(), milliseconds(800));
}

TEST(BackoffTest, JitterAddsUpToTheFactorFromTheInjectedSource) {
  const RandomSource half = [] { return 0.5; };
  EXPECT_EQ(jitter(seconds(2), 1.2, half), milliseconds(3200));
  EXPECT_EQ(jitter(seconds(2), 1.2, [] { return 0.0; }), seconds(2));
  Backoff backoff(seconds(1), seconds(10), 2.0, 1.0, half);
  EXPECT_EQ(backoff.next(), milliseconds(1500));
  EXPECT_EQ(backoff.next(), milliseconds(3000));
}

}  // namespace
}  // namespace kvc::runtime
