#pragma once
// Waits, in real time and bounded, for something another thread does (a fake server's answer
// arriving, an informer's handler running). For tests on a fake clock, advance the clock instead.

#include <chrono>
#include <functional>
#include <thread>

namespace kvc::testing {

inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds limit = std::chrono::seconds(10),
                       std::chrono::milliseconds poll = std::chrono::milliseconds(1)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(poll);
  }
  return true;
}

}  // namespace kvc::testing
