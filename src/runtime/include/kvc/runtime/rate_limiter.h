#pragma once
// Rate limiters for the work queue, with client-go's `workqueue` semantics
// (default_rate_limiters.go):
//
//   ItemExponentialFailureRateLimiter  per item: base * 2^failures, capped at max; forget()
//                                      resets the item
//   BucketRateLimiter                  overall token bucket (qps, burst); when() reserves a
//                                      token and returns how long until it is valid
//   MaxOfRateLimiter                   the longest wait of its parts
//   defaultControllerRateLimiter()     max(per-item 5ms..1000s, bucket 10 qps / 100 burst)
//
// Every limiter is thread-safe; time comes from the injected Clock.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kvc/common/clock.h"

namespace kvc::runtime {

class RateLimiter {
public:
  virtual ~RateLimiter() = default;
  // How long `item` waits before it is processed again. Each call counts one requeue.
  virtual Clock::Duration when(const std::string& item) = 0;
  // Stops tracking `item` (it succeeded): its backoff starts over.
  virtual void forget(const std::string& item) = 0;
  // How many times `item` has been requeued since it was last forgotten.
  virtual int numRequeues(const std::string& item) = 0;
};

// RateLimiter
class ItemExponentialFailureRateLimiter final : public RateLimiter {
public:
  ItemExponentialFailureRateLimiter(Clock::Duration base, Clock::Duration max)
      : base_(base), max_(max) {}
  Clock::Duration when(const std::string& item) override;
  void forget(const std::string& item) override;
  int numRequeues(const std::string& item) override;

private:
  std::mutex mutex_;
  std::map<std::string, int> failures_;
  Clock::Duration base_;
  Clock::Duration max_;
};

// RateLimiter
// A token bucket that starts full. when() always succeeds: it takes a token now or reserves
// one in the future and returns the wait (golang.org/x/time/rate Reserve().Delay()).
class BucketRateLimiter final : public RateLimiter {
public:
  BucketRateLimiter(double qps, int burst, const Clock& clock);
  Clock::Duration when(const std::string& item) override;
  void forget(const std::string&) override {}
  int numRequeues(const std::string&) override { return 0; }

private:
  std::mutex mutex_;
  const Clock& clock_;
  double qps_;
  double burst_;
  double tokens_;
  Clock::TimePoint last_;
};

// RateLimiter
class MaxOfRateLimiter final : public RateLimiter {
public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  Clock::Duration when(const std::string& item) override;
  void forget(const std::string& item) override;
  int numRequeues(const std::string& item) override;

private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

inline constexpr auto kDefaultItemBaseDelay = std::chrono::milliseconds(5);
inline constexpr auto kDefaultItemMaxDelay = std::chrono::seconds(1000);
inline constexpr double kDefaultBucketQps = 10.0;
inline constexpr int kDefaultBucketBurst = 100;

// client-go's DefaultControllerRateLimiter.
std::unique_ptr<RateLimiter> defaultControllerRateLimiter(const Clock& clock);

}  // namespace kvc::runtime
