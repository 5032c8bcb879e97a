#pragma once
// The rate-limited work queue of a controller, with client-go's contract (workqueue/doc.go,
// queue.go, delaying_queue.go, rate_limiting_queue.go):
//
//   - Fair: items are processed in the order they were added.
//   - Stingy: an item added many times before it is processed is processed once (the `dirty`
//     set), and an item is never processed by two workers at once (the `processing` set): an
//     item re-added while processing is queued again only when done() is called.
//   - Delays: addAfter() holds an item until its time (the earliest of several delays wins);
//     addRateLimited() delays by the rate limiter; forget() resets the item's backoff.
//   - Shutdown: shutDown() makes get() return nullopt once the queue is empty and refuses new
//     items (delayed items are dropped); shutDownWithDrain() also waits until every item being
//     processed is done().
//
// Time comes from the injected Clock, so delays are tested with a FakeClock and no sleeps.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "kvc/common/clock.h"
#include "kvc/runtime/rate_limiter.h"

namespace kvc::runtime {

class WorkQueue {
public:
  WorkQueue(std::string name, std::unique_ptr<RateLimiter> limiter, const Clock& clock);
  ~WorkQueue();

  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  const std::string& name() const { return name_; }

  void add(const std::string& item);
  void addAfter(const std::string& item, Clock::Duration delay);
  void addRateLimited(const std::string& item);
  void forget(const std::string& item);
  int numRequeues(const std::string& item);

  // Blocks until an item is ready; nullopt once shut down and empty. The caller must call
  // done(item) when it has finished with the item.
  std::optional<std::string> get();
  // Like get(), but gives up at `deadline` on the queue's clock (nullopt).
  std::optional<std::string> getUntil(Clock::TimePoint deadline);
  void done(const std::string& item);

  // Items ready to be handed out (not counting delayed or processing ones).
  std::size_t len();
  std::size_t delayedLen();
  std::size_t processingLen();

  void shutDown();
  void shutDownWithDrain();
  bool shuttingDown();

  struct Stats {
    std::uint64_t adds = 0;     // items that entered the queue (after deduplication)
    std::uint64_t retries = 0;  // addRateLimited calls
    std::size_t depth = 0;
    std::size_t delayed = 0;
    std::size_t processing = 0;
  };
  Stats stats();

private:
  void addLocked(const std::string& item);
  // Moves delayed items whose time has come into the queue.
  void promoteDueLocked();
  std::optional<std::string> getLocked(std::unique_lock<std::mutex>& lock,
                                       Clock::TimePoint deadline);

  const std::string name_;
  std::unique_ptr<RateLimiter> limiter_;
  const Clock& clock_;

  std::mutex mutex_;
  std::condition_variable_any cv_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;
  std::set<std::string> processing_;
  // Delayed items: ready time -> items, and item -> its ready time.
  std::multimap<Clock::TimePoint, std::string> waiting_;
  std::map<std::string, Clock::TimePoint> waiting_at_;
  bool shutting_down_ = false;
  std::uint64_t adds_ = 0;
  std::uint64_t retries_ = 0;
};

}  // namespace kvc::runtime
