#pragma once
// What a server refused, logged once per refusal with who was refused and the limit, without
// letting a flood flood the log: the first few refusals of each second are logged one by one,
// the rest summed per reason (with the last peer) into one line per second. Every refusal is
// also counted through the server's on_refusal callback (a Prometheus counter per reason).

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace kvc::runtime {

class RefusalLog {
public:
  static constexpr std::size_t kLoggedPerSecond = 5;

  explicit RefusalLog(std::function<void(std::string_view reason)> count);

  // The server's address, for the log lines (set once it listens).
  void setServer(std::string address);
  // One refusal: `reason` is the metric's label, `detail` says which limit and its value.
  void refuse(std::string_view reason, std::string_view peer, std::string_view detail);
  // Logs the refusals not logged one by one since the last call, in one line; called once a
  // second. Returns how many it summed.
  std::size_t summarize();

private:
  struct Suppressed {
    std::size_t count = 0;
    std::string last_peer;
  };
  std::function<void(std::string_view)> count_;
  std::mutex mutex_;
  std::string server_;
  std::size_t logged_this_second_ = 0;
  std::map<std::string, Suppressed, std::less<>> suppressed_;
};

}  // namespace kvc::runtime
