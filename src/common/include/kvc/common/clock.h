#pragma once
// Time comes in through one seam (STYLE.md §6.9, after Envoy's TimeSource and client-go's
// clock.Clock): everything that waits, times out, backs off or stamps a time takes a Clock&.
//
//   RealClock  steady_clock for durations and deadlines, system_clock for timestamps written to
//              objects (Lease renewTime, Event eventTime). realClock() is the process-wide one.
//   FakeClock  time moves only when a test calls advance()/set(); every wait on it wakes when
//              the fake time reaches its deadline, so a unit test never sleeps.
//
// Waits are always interruptible: they take a std::stop_token and a condition variable that the
// caller notifies when the state guarded by `lock` changes.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <iterator>
#include <mutex>
#include <set>
#include <stop_token>

namespace kvc {

class Clock {
public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;

  // Monotonic time, for deadlines and durations.
  virtual TimePoint now() const = 0;
  // Calendar time, for timestamps that other processes read.
  virtual WallTime wallNow() const = 0;

  // Waits on `cv` (the caller holds `lock`) until `ready()` holds, `stop` is requested or this
  // clock reaches `deadline`. Returns ready(). Whoever changes what `ready` reads notifies `cv`.
  virtual bool waitUntil(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock,
                         std::stop_token stop, TimePoint deadline,
                         const std::function<bool()>& ready) const = 0;

  // Sleeps until `deadline` on this clock; false when `stop` was requested first.
  bool sleepUntil(std::stop_token stop, TimePoint deadline) const {
    std::mutex mutex;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> lock(mutex);
    waitUntil(cv, lock, stop, deadline, [] { return false; });
    return !stop.stop_requested();
  }
  bool sleepFor(std::stop_token stop, Duration duration) const {
    return sleepUntil(std::move(stop), now() + duration);
  }
};

// Clock
class RealClock final : public Clock {
public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  WallTime wallNow() const override { return std::chrono::system_clock::now(); }
  bool waitUntil(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock,
                 std::stop_token stop, TimePoint deadline,
                 const std::function<bool()>& ready) const override {
    // Far deadlines (TimePoint::max() means "none") are waited in slices, so that no duration
    // arithmetic inside the standard library overflows.
    constexpr auto kSlice = std::chrono::hours(1);
    while (true) {
      const TimePoint current = now();
      if (ready() || stop.stop_requested() || current >= deadline) {
        return ready();
      }
      const TimePoint until = deadline - current > kSlice ? current + kSlice : deadline;
      if (cv.wait_until(lock, stop, until, ready)) {
        return true;
      }
    }
  }
};

// The process-wide real clock.
inline Clock& realClock() {
  static RealClock clock;
  return clock;
}

// Clock
// A clock that moves only when told. Waiters are woken on every advance(); each waiter also
// re-checks its condition every millisecond of real time, so a notification that races with the
// start of a wait is never lost (the outcome of a test never depends on that real time).
class FakeClock final : public Clock {
public:
  explicit FakeClock(WallTime wall_start = WallTime(std::chrono::seconds(1700000000)))
      : wall_start_(wall_start) {}

  TimePoint now() const override {
    std::lock_guard<std::mutex> guard(mutex_);
    return now_;
  }
  WallTime wallNow() const override {
    std::lock_guard<std::mutex> guard(mutex_);
    return wall_start_ + std::chrono::duration_cast<WallTime::duration>(now_ - TimePoint());
  }

  void advance(Duration d) {
    std::lock_guard<std::mutex> guard(mutex_);
    now_ += d;
    for (std::condition_variable_any* cv : waiters_) {
      cv->notify_all();
    }
  }
  // Moves the clock forward to `t` (never backwards).
  void set(TimePoint t) {
    std::lock_guard<std::mutex> guard(mutex_);
    now_ = std::max(now_, t);
    for (std::condition_variable_any* cv : waiters_) {
      cv->notify_all();
    }
  }
  // How many waits on this clock are blocked on a deadline still in the future (or on none).
  // A wait whose deadline has passed no longer counts, even before its thread has run again,
  // so a test can advance, then wait for waiters() to rise again before the next advance
  // (Go's fakeclock BlockUntil).
  std::size_t waiters() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return static_cast<std::size_t>(std::distance(deadlines_.upper_bound(now_), deadlines_.end()));
  }

  bool waitUntil(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock,
                 std::stop_token stop, TimePoint deadline,
                 const std::function<bool()>& ready) const override {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      waiters_.insert(&cv);
      deadlines_.insert(deadline);
    }
    bool result = ready();
    while (!result && !stop.stop_requested() &&
           (deadline == TimePoint::max() || now() < deadline)) {
      cv.wait_for(lock, stop, std::chrono::milliseconds(1), ready);
      result = ready();
    }
    {
      std::lock_guard<std::mutex> guard(mutex_);
      // Another wait on the same cv may still be registered; erase one registration only.
      auto it = waiters_.find(&cv);
      if (it != waiters_.end()) {
        waiters_.erase(it);
      }
      auto d = deadlines_.find(deadline);
      if (d != deadlines_.end()) {
        deadlines_.erase(d);
      }
    }
    return result;
  }

private:
  mutable std::mutex mutex_;
  TimePoint now_{};
  WallTime wall_start_;
  mutable std::multiset<std::condition_variable_any*> waiters_;
  mutable std::multiset<TimePoint> deadlines_;
};

}  // namespace kvc
