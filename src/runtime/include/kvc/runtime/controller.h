#pragma once
// The reconcile loop (controller-runtime's pkg/reconcile and internal/controller; kube-rs
// controller/mod.rs).
//
// A Request carries only an object key; the reconciler reads the world from informer caches,
// acts, and returns an Action or an error. The controller maps that onto its work queue
// (STYLE.md §4), exactly once per processed key:
//
//   result                                   queue
//   Action::done()                           forget (backoff starts over)
//   Action::requeueAfter(d)                  forget, then addAfter(d)
//   Action::requeueNow()                     addRateLimited (per-item backoff + bucket)
//   error Unavailable, DeadlineExceeded,     addRateLimited: exponential 5 ms .. 1000 s per key,
//         ResourceExhausted, Internal, ...   overall 10 qps / burst 100
//   error Aborted (a Conflict)               addRateLimited: the first retries come after 5, 10,
//                                            20 ms, i.e. at once with a fresh read from the cache
//   error InvalidArgument,                   terminal: forget, then
//   addAfter(terminal_requeue_after)
//         FailedPrecondition                 (5 min by default) as a backstop — the reconciler
//                                            wrote a condition and waits for a change, but a
//                                            change nobody watches (a store that healed, an
//                                            object outside the cache) is still picked up
//   an exception out of the reconciler       caught at the worker (nlohmann's value() throws on a
//                                            wrong type): logged, counted as result "panic",
//                                            addRateLimited; the worker lives on
//
// Workers never process one key concurrently (the queue's contract), so a reconciler needs no
// per-object locking.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "kvc/common/clock.h"
#include "kvc/common/status.h"
#include "kvc/kube/resource.h"
#include "kvc/runtime/informer.h"
#include "kvc/runtime/metrics.h"
#include "kvc/runtime/rate_limiter.h"
#include "kvc/runtime/work_queue.h"

namespace kvc::runtime {

class Trigger;

struct Request {
  std::string namespace_name;  // "" for cluster-scoped objects
  std::string name;

  std::string key() const;
  static Request fromKey(std::string_view key);
  friend bool operator==(const Request&, const Request&) = default;
};

// What to do after a successful reconcile.
struct Action {
  bool requeue = false;
  std::optional<Clock::Duration> requeue_after;

  static Action done() { return {}; }
  static Action requeueNow() { return Action{true, std::nullopt}; }
  static Action requeueAfter(Clock::Duration d) { return Action{false, d}; }
};

class Reconciler {
public:
  virtual ~Reconciler() = default;
  // Brings the object named by `request` towards its desired state. `stop` is requested when
  // the controller shuts down; long calls should pass it on.
  virtual Result<Action> reconcile(const Request& request, std::stop_token stop) = 0;
};

// Maps an object seen by an informer to the requests it should trigger.
using MapFunc = std::function<std::vector<Request>(const Json& object)>;
// Decides whether an update (old -> new) is worth a reconcile (controller-runtime's
// predicates); adds, deletes and resyncs always are.
using UpdateFilter = std::function<bool(const Json& old_object, const Json& new_object)>;

// The object itself.
std::vector<Request> requestForObject(const Json& object);
// The controller owner named in metadata.ownerReferences, when it is of `owner`'s group and
// kind. The request carries the owner's own scope: a cluster-scoped owner is keyed by name alone,
// whatever namespace the child lives in; a namespaced owner lives in the child's namespace (an
// owner reference cannot cross namespaces).
MapFunc requestForOwner(const kube::ResourceType& owner);

// Updates that moved metadata.generation, metadata.deletionTimestamp, metadata.finalizers or
// metadata.labels: what a spec-driven controller reacts to, skipping its own status writes.
bool specOrLifecycleChanged(const Json& old_object, const Json& new_object);
// specOrLifecycleChanged, or status.<field> differs: for a controller that reacts to a part of
// the status another controller writes (the pools claiming a backend in its usedBy).
UpdateFilter specLifecycleOrStatusChanged(std::string field);
// The resync (old == new) and any change of resourceVersion.
bool anyChange(const Json& old_object, const Json& new_object);

struct ControllerOptions {
  std::string name;
  int workers = 1;
  std::unique_ptr<RateLimiter> rate_limiter;  // default: defaultControllerRateLimiter
  Registry* metrics = nullptr;                // optional
  // The backstop after a terminal error (InvalidArgument, FailedPrecondition).
  Clock::Duration terminal_requeue_after = std::chrono::minutes(5);
};

class Controller {
public:
  Controller(ControllerOptions options, std::shared_ptr<Reconciler> reconciler,
             const Clock& clock = realClock());
  ~Controller();

  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  const std::string& name() const { return name_; }

  // Enqueues requests for every add, update and delete the informer reports (updates only when
  // `filter` says so). Call before the informer starts.
  void watch(Informer& informer, MapFunc map = &requestForObject, UpdateFilter filter = nullptr);
  // Enqueues every request `trigger` fires (trigger.h), until this controller is destroyed.
  void watch(std::shared_ptr<Trigger> trigger);
  void enqueue(const Request& request);
  void enqueueAfter(const Request& request, Clock::Duration delay);

  // Starts the workers.
  void start();
  // Stops taking new work, lets running reconciles finish, joins the workers. Idempotent.
  void stop();

  // Processes one item (blocking until one is ready or the queue shuts down); false when the
  // queue is shut down. Workers loop on this; tests call it directly.
  bool processNext();

  WorkQueue& queue() { return queue_; }

private:
  void handle(const std::string& key);
  void count(Counter* counter) const;

  std::string name_;
  std::shared_ptr<Reconciler> reconciler_;
  const Clock& clock_;
  int workers_count_;
  WorkQueue queue_;
  std::stop_source stop_source_;
  std::vector<std::jthread> workers_;
  std::vector<std::shared_ptr<Trigger>> triggers_;
  std::atomic<int> active_{0};

  Counter* reconcile_success_ = nullptr;
  Counter* reconcile_error_ = nullptr;
  Counter* reconcile_requeue_ = nullptr;
  Counter* reconcile_requeue_after_ = nullptr;
  Counter* reconcile_terminal_ = nullptr;
  Counter* reconcile_panic_ = nullptr;
  Clock::Duration terminal_requeue_after_;
  Histogram* reconcile_time_ = nullptr;
  Registry* registry_ = nullptr;
  int collector_id_ = 0;
};

}  // namespace kvc::runtime
