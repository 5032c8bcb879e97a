#pragma once
// What the long-running commands (`kvcache operator`, `kvcache store leader`) share: duration
// flags and turning SIGTERM/SIGINT into a stop request.

#include <pthread.h>

#include <csignal>
#include <stop_token>
#include <string_view>
#include <thread>

#include "kvc/common/clock.h"
#include "kvc/common/status.h"

namespace kvc::cmd::internal {

// "15s", "500ms", "2m", "1h", "1.5s"; InvalidArgument naming `flag` otherwise.
Result<Clock::Duration> parseDuration(std::string_view text, std::string_view flag);

// Blocks SIGTERM and SIGINT in every thread (call before any thread starts) and turns them into
// a stop request from one watcher thread.
class SignalStopper {
public:
  SignalStopper() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  }
  void watch(std::stop_source source) {
    thread_ = std::jthread([this, source](std::stop_token self) mutable {
      const timespec tick{0, 200 * 1000 * 1000};
      while (!self.stop_requested()) {
        const int sig = sigtimedwait(&set_, nullptr, &tick);
        if (sig == SIGTERM || sig == SIGINT) {
          logSignal(sig);
          source.request_stop();
          return;
        }
      }
    });
  }
  ~SignalStopper() {
    if (thread_.joinable()) {
      thread_.request_stop();
      thread_.join();
    }
  }

private:
  static void logSignal(int sig);
  sigset_t set_;
  std::jthread thread_;
};

}  // namespace kvc::cmd::internal
