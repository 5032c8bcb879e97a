#pragma once
// Holds a fake server's handler until the test lets it go: a server that does not answer in time.
// A test opens the gate before it ends, so no handler thread is left waiting.

#include <condition_variable>
#include <mutex>

namespace kvc::testing {

class Gate {
public:
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return open_; });
  }
  void open() {
    std::lock_guard<std::mutex> guard(mutex_);
    open_ = true;
    cv_.notify_all();
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

}  // namespace kvc::testing
