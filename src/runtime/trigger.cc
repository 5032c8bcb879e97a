#include "kvc/runtime/trigger.h"

#include <utility>

namespace kvc::runtime {

void Trigger::fire(const Request& request) const {
  std::lock_guard<std::mutex> guard(mutex_);
  if (sink_ && !request.name.empty()) {
    sink_(request);
  }
}

void Trigger::connect(const void* owner, Sink sink) {
  std::lock_guard<std::mutex> guard(mutex_);
  owner_ = owner;
  sink_ = std::move(sink);
}

void Trigger::disconnect(const void* owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (owner_ == owner) {
    owner_ = nullptr;
    sink_ = nullptr;
  }
}

}  // namespace kvc::runtime
