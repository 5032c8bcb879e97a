#pragma once
// A source of requests that is not an informer (controller-runtime's source.Channel): a
// reconciler that learns that another object needs a pass now — a pool whose ledger writes moved
// the grants of its sibling pools — fires a Trigger, and the controller that watches the trigger
// (Controller::watch(Trigger&)) puts the request on its own queue, with the queue's contract
// (a key already waiting is not added twice; a key being processed is passed again after).
//
// Firing before any controller watches the trigger, or after that controller is gone, does
// nothing. A trigger feeds one controller: the last that watched it (a controller going away
// disconnects only a trigger that still feeds it). The controller shares its ownership, so the
// trigger outlives every controller that watches it. Thread-safe.

#include <functional>
#include <mutex>

#include "kvc/runtime/controller.h"

namespace kvc::runtime {

class Trigger {
public:
  Trigger() = default;
  Trigger(const Trigger&) = delete;
  Trigger& operator=(const Trigger&) = delete;

  void fire(const Request& request) const;

private:
  friend class Controller;
  using Sink = std::function<void(const Request&)>;
  void connect(const void* owner, Sink sink);
  void disconnect(const void* owner);

  mutable std::mutex mutex_;
  const void* owner_ = nullptr;
  Sink sink_;
};

}  // namespace kvc::runtime
