#include "kvc/webhook/injection_events.h"

#include <spdlog/spdlog.h>

#include "kvc/kube/resource.h"

namespace kvc::webhook {
namespace {

constexpr std::size_t kOwnerCacheLimit = 4096;

// The controller owner reference of an object, or null. Read without Json::value(), which
// throws on a field of another type: the Pod is whatever was POSTed to the webhook, and a throw
// here ends the worker thread, and the process with it.
Json controllerOwner(const Json& object) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return Json();
  }
  const auto owners = meta->find("ownerReferences");
  if (owners == meta->end() || !owners->is_array()) {
    return Json();
  }
  for (const Json& owner : *owners) {
    if (!owner.is_object()) {
      continue;
    }
    const auto controller = owner.find("controller");
    if (controller != owner.end() && controller->is_boolean() && controller->get<bool>()) {
      return owner;
    }
  }
  return Json();
}

// An owner reference's field, "" when absent or not a string.
std::string field(const Json& owner, const char* key) { return stringAt(owner, {key}); }

Json reference(const std::string& api_version, const std::string& kind,
               const std::string& namespace_name, const std::string& name, const std::string& uid) {
  Json object = {{"apiVersion", api_version},
                 {"kind", kind},
                 {"metadata", {{"namespace", namespace_name}, {"name", name}}}};
  if (!uid.empty()) {
    object["metadata"]["uid"] = uid;
  }
  return object;
}

}  // namespace

InjectionEvents::InjectionEvents(kube::ClientPtr client, runtime::EventRecorder& recorder,
                                 std::size_t max_queued)
    : client_(std::move(client)),
      recorder_(recorder),
      max_queued_(max_queued),
      worker_([this] { run(); }) {}

InjectionEvents::~InjectionEvents() { stop(); }

void InjectionEvents::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      return;
    }
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) {
    worker_.join();
  }
}

void InjectionEvents::onInjection(const AdmissionRequest& request, const policy::Decision& decision,
                                  std::chrono::nanoseconds) {
  if (request.dry_run || (decision.verdict != policy::Verdict::Injected &&
                          decision.verdict != policy::Verdict::Refused)) {
    return;
  }
  Pending pending;
  pending.pod = {{"metadata", request.object.value("metadata", Json::object())}};
  if (pending.pod["metadata"].is_object()) {
    pending.pod["metadata"].erase("annotations");  // only identity and owners are needed
  }
  pending.namespace_name = request.namespace_name;
  if (decision.verdict == policy::Verdict::Refused) {
    pending.refused = true;
    pending.reason = std::string(policy::refusalReasonName(decision.refusal->reason));
    pending.note = decision.refusal->message;
  } else {
    const policy::InjectionSummary& s = *decision.summary;
    pending.note = "Injected " + std::string(policy::engineRecordName(s.engine)) +
                   " client configuration (" + std::string(s.render.vehicle) + ") into container " +
                   s.container + " from KVCachePoolBinding " + s.resolution.binding + " (pool " +
                   s.resolution.pool + ", domain " + s.resolution.domain.name + ")";
  }
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= max_queued_) {
      return;  // a burst beyond what Events can usefully say; the metrics still count it
    }
    queue_.push_back(std::move(pending));
  }
  wake_.notify_one();
}

Json InjectionEvents::regardingFor(const Pending& pending) {
  const Json owner = controllerOwner(pending.pod);
  std::string pod_name = stringAt(pending.pod, {"metadata", "name"});
  if (pod_name.empty()) {
    pod_name = stringAt(pending.pod, {"metadata", "generateName"});
  }
  if (owner.is_null()) {
    return reference("v1", "Pod", pending.namespace_name, pod_name.empty() ? "pod" : pod_name, "");
  }
  Json regarding = reference(field(owner, "apiVersion"), field(owner, "kind"),
                             pending.namespace_name, field(owner, "name"), field(owner, "uid"));
  if (field(owner, "kind") != "ReplicaSet" || field(owner, "apiVersion") != "apps/v1") {
    return regarding;
  }
  // A ReplicaSet's Pods belong to its Deployment, which is what `kubectl describe` is run on.
  const std::string key = pending.namespace_name + "/" + field(owner, "name");
  auto cached = replica_set_owners_.find(key);
  if (cached == replica_set_owners_.end()) {
    if (replica_set_owners_.size() >= kOwnerCacheLimit) {
      replica_set_owners_.clear();
    }
    kube::ResourceType replica_sets{"apps", "v1", "ReplicaSet", "replicasets", true};
    auto replica_set = kube::Api(client_, replica_sets, pending.namespace_name)
                           .withTimeout(std::chrono::seconds(5))
                           .getOptional(field(owner, "name"));
    Json deployment;
    if (replica_set.ok() && replica_set->has_value()) {
      deployment = controllerOwner(**replica_set);
    }
    cached = replica_set_owners_.emplace(key, deployment).first;
  }
  if (!cached->second.is_null()) {
    regarding = reference(field(cached->second, "apiVersion"), field(cached->second, "kind"),
                          pending.namespace_name, field(cached->second, "name"),
                          field(cached->second, "uid"));
  }
  return regarding;
}

void InjectionEvents::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stopping_) {
        break;
      }
      continue;
    }
    Pending pending = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    const Json regarding = regardingFor(pending);
    if (pending.refused) {
      recorder_.event(regarding, runtime::EventType::Warning, "KVCacheInjectionRefused", "Inject",
                      pending.reason + ": " + pending.note);
    } else {
      recorder_.event(regarding, runtime::EventType::Normal, "KVCacheInjected", "Inject",
                      pending.note);
    }
    lock.lock();
    busy_ = false;
    idle_.notify_all();
  }
}

void InjectionEvents::flushForTest() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

}  // namespace kvc::webhook
