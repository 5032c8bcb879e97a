#include "kvc/runtime/trigger.h"

#include <utility>

namespace kvc::runtime {

void Trigger::fire(const Request& request) const {
  std::lock_guard<std::mutex> guard(mutex_);
  if (sink_ && !request.name.empty()) {
    sink_(request);
  }
}

void Trigger::connect(Sink sink) {
  std::lock_guard<std::mutex> guard(mutex_);
  sink_ = std::move(sink);
}

void Trigger::disconnect() {
  std::lock_guard<std::mutex> guard(mutex_);
  sink_ = nullptr;
}

}  // namespace kvc::runtime
