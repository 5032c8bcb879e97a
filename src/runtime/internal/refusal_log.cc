#include "refusal_log.h"

#include <spdlog/spdlog.h>

namespace kvc::runtime {

RefusalLog::RefusalLog(std::function<void(std::string_view reason)> count)
    : count_(std::move(count)) {}

void RefusalLog::setServer(std::string address) {
  std::lock_guard lock(mutex_);
  server_ = std::move(address);
}

void RefusalLog::refuse(std::string_view reason, std::string_view peer, std::string_view detail) {
  if (count_) {
    count_(reason);
  }
  std::lock_guard lock(mutex_);
  if (logged_this_second_ < kLoggedPerSecond) {
    ++logged_this_second_;
    spdlog::warn("http server {}: refused {} ({}): {}", server_, peer, reason, detail);
    return;
  }
  auto it = suppressed_.find(reason);
  if (it == suppressed_.end()) {
    it = suppressed_.emplace(std::string(reason), Suppressed{}).first;
  }
  ++it->second.count;
  it->second.last_peer = std::string(peer);
}

std::size_t RefusalLog::summarize() {
  std::lock_guard lock(mutex_);
  logged_this_second_ = 0;
  if (suppressed_.empty()) {
    return 0;
  }
  std::size_t total = 0;
  std::string counts;
  for (const auto& [reason, s] : suppressed_) {
    total += s.count;
    counts += (counts.empty() ? "" : ", ") + reason + " " + std::to_string(s.count) +
              " (last from " + s.last_peer + ")";
  }
  spdlog::warn("http server {}: {} more refusals in the last second: {}", server_, total, counts);
  suppressed_.clear();
  return total;
}

}  // namespace kvc::runtime
