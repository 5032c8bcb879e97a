#include "kvc/runtime/controller.h"

#include <spdlog/spdlog.h>

#include "kvc/kube/client.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/trigger.h"

namespace kvc::runtime {

std::string Request::key() const { return kube::object::key(namespace_name, name); }

Request Request::fromKey(std::string_view key) {
  auto [namespace_name, name] = kube::object::splitKey(key);
  return Request{std::move(namespace_name), std::move(name)};
}

std::vector<Request> requestForObject(const Json& object) {
  return {Request{kube::object::namespaceName(object), kube::object::name(object)}};
}

MapFunc requestForOwner(const kube::ResourceType& owner) {
  return [owner](const Json& object) {
    std::vector<Request> out;
    auto meta = object.find("metadata");
    if (meta == object.end() || !meta->is_object()) {
      return out;
    }
    auto owners = meta->find("ownerReferences");
    if (owners == meta->end() || !owners->is_array()) {
      return out;
    }
    for (const Json& ref : *owners) {
      if (!ref.is_object() || !ref.value("controller", false) ||
          ref.value("kind", std::string()) != owner.kind) {
        continue;
      }
      // The group is what identifies a kind; the version may differ (v1 and v1beta1 alike).
      const std::string api_version = ref.value("apiVersion", std::string());
      const std::size_t slash = api_version.find('/');
      const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
      if (group != owner.group) {
        continue;
      }
      out.push_back(Request{owner.namespaced ? kube::object::namespaceName(object) : "",
                            ref.value("name", std::string())});
    }
    return out;
  };
}

namespace {

const Json& metaOf(const Json& object) {
  static const Json kEmpty = Json::object();
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

Json metaField(const Json& object, const char* field) {
  const Json& meta = metaOf(object);
  auto it = meta.find(field);
  return it == meta.end() ? Json() : *it;
}

}  // namespace

bool specOrLifecycleChanged(const Json& old_object, const Json& new_object) {
  if (&old_object == &new_object) {
    return true;  // a resync re-delivers the object as it is
  }
  for (const char* field : {"generation", "deletionTimestamp", "finalizers", "labels"}) {
    if (metaField(old_object, field) != metaField(new_object, field)) {
      return true;
    }
  }
  return false;
}

UpdateFilter specLifecycleOrStatusChanged(std::string field) {
  return [field = std::move(field)](const Json& old_object, const Json& new_object) {
    const auto status_field = [&field](const Json& object) {
      auto status = object.find("status");
      if (status == object.end() || !status->is_object()) {
        return Json();
      }
      auto it = status->find(field);
      return it == status->end() ? Json() : *it;
    };
    return specOrLifecycleChanged(old_object, new_object) ||
           status_field(old_object) != status_field(new_object);
  };
}

bool anyChange(const Json&, const Json&) { return true; }

Controller::Controller(ControllerOptions options, std::shared_ptr<Reconciler> reconciler,
                       const Clock& clock)
    : name_(options.name),
      reconciler_(std::move(reconciler)),
      clock_(clock),
      workers_count_(std::max(1, options.workers)),
      queue_(options.name,
             options.rate_limiter ? std::move(options.rate_limiter)
                                  : defaultControllerRateLimiter(clock),
             clock),
      terminal_requeue_after_(options.terminal_requeue_after),
      registry_(options.metrics) {
  if (registry_ != nullptr) {
    auto& total = registry_->counter("controller_runtime_reconcile_total",
                                     "Total number of reconciliations per controller",
                                     {"controller", "result"});
    reconcile_success_ = &total.with({name_, "success"});
    reconcile_error_ = &total.with({name_, "error"});
    reconcile_requeue_ = &total.with({name_, "requeue"});
    reconcile_requeue_after_ = &total.with({name_, "requeue_after"});
    reconcile_terminal_ = &total.with({name_, "terminal"});
    reconcile_panic_ = &total.with({name_, "panic"});
    reconcile_time_ =
        &registry_
             ->histogram("controller_runtime_reconcile_time_seconds",
                         "Length of time per reconciliation per controller", {"controller"})
             .with({name_});
    collector_id_ = registry_->addCollector([this](MetricWriter& w) {
      const WorkQueue::Stats s = queue_.stats();
      const std::vector<std::pair<std::string, std::string>> labels = {{"name", name_}};
      w.family("workqueue_depth", "Current depth of the work queue", "gauge");
      w.sample("workqueue_depth", labels, static_cast<double>(s.depth));
      w.family("workqueue_delayed", "Items waiting for their delay to pass", "gauge");
      w.sample("workqueue_delayed", labels, static_cast<double>(s.delayed));
      w.family("workqueue_adds_total", "Total number of adds handled by the work queue", "counter");
      w.sample("workqueue_adds_total", labels, static_cast<double>(s.adds));
      w.family("workqueue_retries_total", "Total number of rate-limited retries", "counter");
      w.sample("workqueue_retries_total", labels, static_cast<double>(s.retries));
      w.family("controller_runtime_active_workers", "Workers currently reconciling", "gauge");
      w.sample("controller_runtime_active_workers", {{"controller", name_}},
               static_cast<double>(active_.load()));
    });
  }
}

Controller::~Controller() {
  for (const std::shared_ptr<Trigger>& trigger : triggers_) {
    trigger->disconnect(this);
  }
  stop();
  if (registry_ != nullptr && collector_id_ != 0) {
    registry_->removeCollector(collector_id_);
  }
}

void Controller::watch(Informer& informer, MapFunc map, UpdateFilter filter) {
  auto enqueue_all = [this, map](const Json& object) {
    for (const Request& r : map(object)) {
      if (!r.name.empty()) {
        queue_.add(r.key());
      }
    }
  };
  EventHandler handler;
  handler.on_add = [enqueue_all](const ObjectPtr& object, bool) { enqueue_all(*object); };
  handler.on_update = [enqueue_all, filter](const ObjectPtr& old_object,
                                            const ObjectPtr& new_object) {
    const bool resync = old_object == new_object;
    if (!resync && filter && !filter(*old_object, *new_object)) {
      return;
    }
    enqueue_all(*new_object);
    if (!resync) {
      enqueue_all(*old_object);  // a changed owner reference points both ways
    }
  };
  handler.on_delete = [enqueue_all](const ObjectPtr& object, bool) { enqueue_all(*object); };
  informer.addEventHandler(std::move(handler));
}

void Controller::watch(std::shared_ptr<Trigger> trigger) {
  trigger->connect(this, [this](const Request& request) { enqueue(request); });
  triggers_.push_back(std::move(trigger));
}

void Controller::enqueue(const Request& request) { queue_.add(request.key()); }

void Controller::enqueueAfter(const Request& request, Clock::Duration delay) {
  queue_.addAfter(request.key(), delay);
}

void Controller::start() {
  if (!workers_.empty()) {
    return;
  }
  spdlog::info("controller {}: starting {} worker(s)", name_, workers_count_);
  for (int i = 0; i < workers_count_; ++i) {
    workers_.emplace_back([this] {
      while (processNext()) {
      }
    });
  }
}

void Controller::stop() {
  stop_source_.request_stop();
  queue_.shutDownWithDrain();
  for (std::jthread& worker : workers_) {
    if (worker.joinable()) {
      worker.join();
    }
  }
  if (!workers_.empty()) {
    spdlog::info("controller {}: stopped", name_);
  }
  workers_.clear();
}

bool Controller::processNext() {
  std::optional<std::string> key = queue_.get();
  if (!key) {
    return false;
  }
  ++active_;
  handle(*key);
  --active_;
  queue_.done(*key);
  return true;
}

void Controller::count(Counter* counter) const {
  if (counter != nullptr) {
    counter->inc();
  }
}

void Controller::handle(const std::string& key) {
  const Request request = Request::fromKey(key);
  const Clock::TimePoint start = clock_.now();
  std::optional<Result<Action>> outcome;
  try {
    outcome.emplace(reconciler_->reconcile(request, stop_source_.get_token()));
  } catch (const std::exception& e) {
    // The exception boundary: one bad object must not take the worker (and the process) down.
    spdlog::error("controller {}: {}: the reconciler threw ({}); retrying with backoff", name_, key,
                  e.what());
  } catch (...) {
    spdlog::error("controller {}: {}: the reconciler threw; retrying with backoff", name_, key);
  }
  if (reconcile_time_ != nullptr) {
    reconcile_time_->observe(std::chrono::duration<double>(clock_.now() - start).count());
  }
  // Each outcome is counted after the queue has taken it: whoever waits for the count (a test,
  // a scrape) then finds the key's next pass already scheduled.
  if (!outcome) {
    queue_.addRateLimited(key);
    count(reconcile_panic_);
    return;
  }
  const Result<Action>& result = *outcome;
  if (!result.ok()) {
    const Status& status = result.status();
    switch (status.code()) {
      case StatusCode::InvalidArgument:
      case StatusCode::FailedPrecondition:
        spdlog::warn(
            "controller {}: {}: terminal error, waiting for a change (backstop in {} s): {}", name_,
            key, std::chrono::duration_cast<std::chrono::seconds>(terminal_requeue_after_).count(),
            status.toString());
        queue_.forget(key);
        queue_.addAfter(key, terminal_requeue_after_);
        count(reconcile_terminal_);
        return;
      default:
        spdlog::warn("controller {}: {}: {} (retry {})", name_, key, status.toString(),
                     queue_.numRequeues(key) + 1);
        queue_.addRateLimited(key);
        count(reconcile_error_);
        return;
    }
  }
  const Action& action = *result;
  if (action.requeue_after && *action.requeue_after > Clock::Duration::zero()) {
    queue_.forget(key);
    queue_.addAfter(key, *action.requeue_after);
    count(reconcile_requeue_after_);
  } else if (action.requeue) {
    queue_.addRateLimited(key);
    count(reconcile_requeue_);
  } else {
    queue_.forget(key);
    count(reconcile_success_);
  }
}

}  // namespace kvc::runtime
