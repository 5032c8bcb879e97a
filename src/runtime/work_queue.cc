#include "kvc/runtime/work_queue.h"

namespace kvc::runtime {

WorkQueue::WorkQueue(std::string name, std::unique_ptr<RateLimiter> limiter, const Clock& clock)
    : name_(std::move(name)), limiter_(std::move(limiter)), clock_(clock) {}

WorkQueue::~WorkQueue() { shutDown(); }

void WorkQueue::addLocked(const std::string& item) {
  if (shutting_down_ || dirty_.count(item) > 0) {
    return;
  }
  ++adds_;
  dirty_.insert(item);
  if (processing_.count(item) > 0) {
    return;  // queued again by done()
  }
  queue_.push_back(item);
  cv_.notify_one();
}

void WorkQueue::add(const std::string& item) {
  std::lock_guard<std::mutex> guard(mutex_);
  addLocked(item);
}

void WorkQueue::addAfter(const std::string& item, Clock::Duration delay) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (shutting_down_) {
    return;
  }
  if (delay <= Clock::Duration::zero()) {
    addLocked(item);
    return;
  }
  const Clock::TimePoint ready_at = clock_.now() + delay;
  auto existing = waiting_at_.find(item);
  if (existing != waiting_at_.end()) {
    if (existing->second <= ready_at) {
      return;  // an earlier delay already holds the item
    }
    auto range = waiting_.equal_range(existing->second);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second == item) {
        waiting_.erase(it);
        break;
      }
    }
  }
  waiting_.emplace(ready_at, item);
  waiting_at_[item] = ready_at;
  cv_.notify_all();  // a getter may now have an earlier deadline to wait for
}

void WorkQueue::addRateLimited(const std::string& item) {
  const Clock::Duration delay = limiter_->when(item);
  {
    std::lock_guard<std::mutex> guard(mutex_);
    ++retries_;
  }
  addAfter(item, delay);
}

void WorkQueue::forget(const std::string& item) { limiter_->forget(item); }

int WorkQueue::numRequeues(const std::string& item) { return limiter_->numRequeues(item); }

void WorkQueue::promoteDueLocked() {
  if (waiting_.empty()) {
    return;
  }
  const Clock::TimePoint now = clock_.now();
  while (!waiting_.empty() && waiting_.begin()->first <= now) {
    std::string item = std::move(waiting_.begin()->second);
    waiting_.erase(waiting_.begin());
    waiting_at_.erase(item);
    addLocked(item);
  }
}

std::optional<std::string> WorkQueue::getLocked(std::unique_lock<std::mutex>& lock,
                                                Clock::TimePoint deadline) {
  while (true) {
    promoteDueLocked();
    if (!queue_.empty()) {
      break;
    }
    if (shutting_down_) {
      return std::nullopt;
    }
    if (clock_.now() >= deadline) {
      return std::nullopt;
    }
    Clock::TimePoint wake = deadline;
    if (!waiting_.empty() && waiting_.begin()->first < wake) {
      wake = waiting_.begin()->first;
    }
    const std::size_t delayed_before = waiting_.size();
    const Clock::TimePoint earliest_before =
        waiting_.empty() ? Clock::TimePoint::max() : waiting_.begin()->first;
    clock_.waitUntil(cv_, lock, std::stop_token(), wake, [&] {
      return !queue_.empty() || shutting_down_ || waiting_.size() != delayed_before ||
             (!waiting_.empty() && waiting_.begin()->first != earliest_before);
    });
  }
  std::string item = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(item);
  dirty_.erase(item);
  return item;
}

std::optional<std::string> WorkQueue::get() {
  std::unique_lock<std::mutex> lock(mutex_);
  return getLocked(lock, Clock::TimePoint::max());
}

std::optional<std::string> WorkQueue::getUntil(Clock::TimePoint deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  return getLocked(lock, deadline);
}

void WorkQueue::done(const std::string& item) {
  std::lock_guard<std::mutex> guard(mutex_);
  processing_.erase(item);
  if (dirty_.count(item) > 0) {
    queue_.push_back(item);
    cv_.notify_one();
  } else if (processing_.empty()) {
    cv_.notify_all();  // a drain may be waiting
  }
}

std::size_t WorkQueue::len() {
  std::lock_guard<std::mutex> guard(mutex_);
  promoteDueLocked();
  return queue_.size();
}

std::size_t WorkQueue::delayedLen() {
  std::lock_guard<std::mutex> guard(mutex_);
  promoteDueLocked();
  return waiting_.size();
}

std::size_t WorkQueue::processingLen() {
  std::lock_guard<std::mutex> guard(mutex_);
  return processing_.size();
}

void WorkQueue::shutDown() {
  std::lock_guard<std::mutex> guard(mutex_);
  shutting_down_ = true;
  waiting_.clear();
  waiting_at_.clear();
  cv_.notify_all();
}

void WorkQueue::shutDownWithDrain() {
  std::unique_lock<std::mutex> lock(mutex_);
  shutting_down_ = true;
  waiting_.clear();
  waiting_at_.clear();
  cv_.notify_all();
  cv_.wait(lock, [this] { return processing_.empty(); });
}

bool WorkQueue::shuttingDown() {
  std::lock_guard<std::mutex> guard(mutex_);
  return shutting_down_;
}

WorkQueue::Stats WorkQueue::stats() {
  std::lock_guard<std::mutex> guard(mutex_);
  promoteDueLocked();
  return Stats{adds_, retries_, queue_.size(), waiting_.size(), processing_.size()};
}

}  // namespace kvc::runtime
