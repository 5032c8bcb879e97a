#pragma once
// Runs fn(0) … fn(n - 1) on `threads` threads, each taking the next index until none is left:
// how the integration tests and the load benchmarks make many API requests at once.

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace kvc::testing {

inline void parallel(int n, int threads, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        fn(i);
      }
    });
  }
  for (std::thread& thread : pool) {
    thread.join();
  }
}

}  // namespace kvc::testing
