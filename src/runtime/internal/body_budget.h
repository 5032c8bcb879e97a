#pragma once
// The bytes of request bodies a server holds at once. A request whose body may be larger than
// the small-body threshold takes its declared length (or the body limit, when chunked) from
// the budget when its header arrives, before any of the body is read, and gives it back once
// the handler has answered; a request the budget cannot take is answered 503 with
// Retry-After. Small bodies are not charged: with the connection cap they are bounded by
// max_connections x small_body_bytes already, and the API server's reviews (a few KiB) are
// never refused because large hostile bodies hold the budget.

#include <atomic>
#include <cstddef>

namespace kvc::runtime {

class BodyBudget {
public:
  explicit BodyBudget(std::size_t capacity) : capacity_(capacity) {}

  // Takes `bytes`; false (and nothing taken) when that would pass the capacity.
  bool take(std::size_t bytes) {
    std::size_t used = used_.load();
    do {
      if (bytes > capacity_ || used > capacity_ - bytes) {
        return false;
      }
    } while (!used_.compare_exchange_weak(used, used + bytes));
    return true;
  }
  void give(std::size_t bytes) { used_ -= bytes; }
  std::size_t used() const { return used_.load(); }
  std::size_t capacity() const { return capacity_; }

private:
  const std::size_t capacity_;
  std::atomic<std::size_t> used_{0};
};

}  // namespace kvc::runtime
