#include "kvc/runtime/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace kvc::runtime {

Clock::Duration ItemExponentialFailureRateLimiter::when(const std::string& item) {
  std::lock_guard<std::mutex> guard(mutex_);
  const int exp = failures_[item]++;
  // Compute in double seconds so that 2^exp cannot overflow the duration type.
  const double base = std::chrono::duration<double>(base_).count();
  const double backoff = base * std::pow(2.0, static_cast<double>(exp));
  const double max = std::chrono::duration<double>(max_).count();
  if (backoff >= max) {
    return max_;
  }
  return std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(backoff));
}

void ItemExponentialFailureRateLimiter::forget(const std::string& item) {
  std::lock_guard<std::mutex> guard(mutex_);
  failures_.erase(item);
}

int ItemExponentialFailureRateLimiter::numRequeues(const std::string& item) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(double qps, int burst, const Clock& clock)
    : clock_(clock),
      qps_(qps),
      burst_(static_cast<double>(burst)),
      tokens_(static_cast<double>(burst)),
      last_(clock.now()) {}

Clock::Duration BucketRateLimiter::when(const std::string&) {
  std::lock_guard<std::mutex> guard(mutex_);
  const Clock::TimePoint now = clock_.now();
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1.0;
  if (tokens_ >= 0.0) {
    return Clock::Duration::zero();
  }
  const double wait = -tokens_ / qps_;
  return std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(wait));
}

Clock::Duration MaxOfRateLimiter::when(const std::string& item) {
  Clock::Duration longest = Clock::Duration::zero();
  for (auto& limiter : limiters_) {
    longest = std::max(longest, limiter->when(item));
  }
  return longest;
}

void MaxOfRateLimiter::forget(const std::string& item) {
  for (auto& limiter : limiters_) {
    limiter->forget(item);
  }
}

int MaxOfRateLimiter::numRequeues(const std::string& item) {
  int most = 0;
  for (auto& limiter : limiters_) {
    most = std::max(most, limiter->numRequeues(item));
  }
  return most;
}

std::unique_ptr<RateLimiter> defaultControllerRateLimiter(const Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> parts;
  parts.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(kDefaultItemBaseDelay,
                                                                      kDefaultItemMaxDelay));
  parts.push_back(
      std::make_unique<BucketRateLimiter>(kDefaultBucketQps, kDefaultBucketBurst, clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(parts));
}

}  // namespace kvc::runtime
