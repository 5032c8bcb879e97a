#include "internal/managed_backend.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "internal/foreground_delete.h"
#include "internal/master_reader.h"
#include "kvc/api/backend_conditions.h"
#include "kvc/api/message.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/policy/store/store_leader.h"
#include "kvc/policy/store/store_render.h"
#include "kvc/policy/quota/tenant_quota_policy.h"
#include "kvc/policy/store/tier_cleanup.h"
#include "kvc/runtime/events.h"
#include "kvc/runtime/finalizer.h"

namespace kvc::controllers::internal {
namespace {

namespace bc = api::backend;

constexpr std::string_view kStoreAppLabel = "app.kubernetes.io/name";
constexpr std::string_view kInstanceLabel = "app.kubernetes.io/instance";
constexpr std::string_view kComponentLabel = "app.kubernetes.io/component";
constexpr std::string_view kStoreApp = "kv-cache-backend";
// After a workload's Pods' grace period, how long its teardown may take before it is reported.
constexpr std::int64_t kWorkloadOverdueSeconds = 120;

std::string label(const Json& object, std::string_view key) {
  const Json labels = object.value(Json::json_pointer("/metadata/labels"), Json::object());
  auto it = labels.find(std::string(key));
  return it != labels.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string instanceSelector(const std::string& backend) {
  return std::string(kStoreAppLabel) + "=" + std::string(kStoreApp) + "," +
         std::string(kInstanceLabel) + "=" + backend;
}

// The seconds from `from` to `to` (RFC 3339 times); nullopt when either does not parse.
std::optional<std::int64_t> secondsBetween(const std::string& from, const std::string& to) {
  auto a = kube::parseTime(from);
  auto b = kube::parseTime(to);
  if (!a.ok() || !b.ok()) {
    return std::nullopt;
  }
  return std::chrono::duration_cast<std::chrono::seconds>(*b - *a).count();
}

// The informer cache of the store's objects of `kind`, or nullptr (then they are read live).
const runtime::Cache* childCache(const BackendControllerConfig& config,
                                 const kube::ResourceType& kind) {
  for (const runtime::ChildSource& source : config.children) {
    if (source.resource.plural == kind.plural && source.resource.group == kind.group) {
      return source.cache;
    }
  }
  return nullptr;
}

std::string creationTime(const Json& object) {
  return object.value(Json::json_pointer("/metadata/creationTimestamp"), std::string());
}

std::string describe(const Json& object) {
  return object.value("kind", std::string()) + " " + kube::object::namespaceName(object) + "/" +
         kube::object::name(object);
}

}  // namespace

ManagedBackend::ManagedBackend(const BackendControllerConfig& config,
                               const runtime::StatusWriter& status)
    : config_(config), status_(status), owned_(config.client) {}

std::vector<Json> ManagedBackend::storePods(const std::string& backend,
                                            const std::string& component) const {
  std::vector<Json> out;
  if (config_.store_pods == nullptr) {
    return out;
  }
  for (const runtime::ObjectPtr& pod : config_.store_pods->list()) {
    if (label(*pod, kInstanceLabel) == backend && label(*pod, kComponentLabel) == component) {
      out.push_back(*pod);
    }
  }
  return out;
}

policy::BackendFacts backendConsumers(const api::KVCacheBackend& backend,
                                      const std::set<std::string>& gone) {
  policy::BackendFacts facts;
  facts.backend = backend;
  for (const api::ObjectReference& user : backend.status.used_by) {
    if (gone.count(user.name) > 0) {
      facts.dropped_stale = true;
    } else {
      facts.consumers.push_back(user.name);
    }
  }
  std::sort(facts.consumers.begin(), facts.consumers.end());
  facts.consumers.erase(std::unique(facts.consumers.begin(), facts.consumers.end()),
                        facts.consumers.end());
  return facts;
}

Result<runtime::Action> ManagedBackend::reconcile(const Json& object,
                                                  const api::KVCacheBackend& backend,
                                                  const std::set<std::string>& gone,
                                                  std::stop_token stop) {
  const policy::BackendFacts facts = backendConsumers(backend, gone);
  const bool tearing_down = backend.metadata.deleting && facts.consumers.empty();
  if (tearing_down) {
    bool done = false;
    auto where = teardown(object, backend, done, stop);
    if (!where.ok()) {
      return where.status().withContext("tearing down KVCacheBackend " + backend.metadata.name);
    }
    if (done) {
      if (runtime::ObjectPtr latest = config_.backends->get(backend.metadata.name);
          latest && api::hasFinalizer(backend.metadata, bc::kFinalizer)) {
        const kube::Api backends(config_.client, kube::resources::kvCacheBackends());
        Status removed = runtime::removeFinalizer(backends, *latest, bc::kFinalizer, stop);
        if (!removed.ok() && removed.code() != StatusCode::NotFound) {
          return removed.withContext("releasing KVCacheBackend " + backend.metadata.name);
        }
      }
      spdlog::info("backend {}: torn down and released", backend.metadata.name);
      return runtime::Action::done();
    }
    const std::string now = kube::formatTime(config_.clock->wallNow());
    auto written = status_.update(
        *config_.backends, backend.metadata.name,
        [&](const Json& current) -> Result<Json> {
          KVC_ASSIGN_OR_RETURN(api::KVCacheBackend fresh, api::backendFromJson(current));
          return api::backendStatusToJson(policy::teardownStatus(
              backendConsumers(fresh, gone), *where, fresh.metadata.generation, now));
        },
        stop);
    if (!written.ok()) {
      return written.status();
    }
    return runtime::Action::requeueAfter(config_.teardown_poll);
  }

  if (!backend.metadata.deleting &&
      !api::hasFinalizer(backend.metadata, bc::kFinalizer)) {
    const kube::Api backends(config_.client, kube::resources::kvCacheBackends());
    KVC_RETURN_IF_ERROR(runtime::addFinalizer(backends, object, bc::kFinalizer, stop));
  }
  // Render and apply; the result says why no image resolves, if none does.
  auto converged = converge(object, backend, stop);
  if (!converged.ok() && config_.events != nullptr) {
    // Nothing was changed (a refusal is found before any write); the status still reports what
    // runs, and the error is retried with backoff.
    config_.events->event(object, runtime::EventType::Warning, "RenderFailed", "Apply",
                          converged.status().message());
  }
  policy::ManagedBackendFacts observed =
      observe(backend, converged.ok() ? *converged : std::nullopt, stop);
  noteHandover(object, observed.lease);

  policy::BackendReading reading;
  if (!observed.image_error || observed.leader_deployment.is_object()) {
    const std::string admin = api::endpointAddress(
        policy::managedEndpoints(backend.metadata.name, config_.operator_namespace),
        api::kEndpointAdmin);
    auto client = config_.stores(admin);
    if (client.ok()) {
      reading = readBackend(**client);
    } else {
      reading.admin_address = admin;
      reading.health_error = client.status().message();
    }
  }
  auto written = writeStatus(object, gone, std::move(observed), reading, stop);
  if (!written.ok()) {
    return written.status();
  }
  if (!converged.ok()) {
    return converged.status();
  }
  return runtime::Action::requeueAfter(config_.resync);
}

Result<std::optional<std::string>> ManagedBackend::converge(const Json& object,
                                                            const api::KVCacheBackend& backend,
                                                            std::stop_token stop) {
  policy::StoreInputs inputs;
  inputs.namespace_name = config_.operator_namespace;
  inputs.settings_image = config_.settings ? config_.settings().kv_cache_backend_image
                                           : std::string(api::kDefaultBackendImage);
  if (auto image = policy::storeImage(backend, std::nullopt, inputs); !image.ok()) {
    return std::optional<std::string>(image.status().message());
  }
  Json live_leader;
  if (config_.deployments != nullptr) {
    if (runtime::ObjectPtr live = config_.deployments->get(
            config_.operator_namespace + "/" + policy::leaderName(backend.metadata.name))) {
      live_leader = *live;
    }
  }
  KVC_ASSIGN_OR_RETURN(std::vector<policy::RenderedObject> rendered,
                       policy::renderStore(backend, inputs, live_leader));
  KVC_RETURN_IF_ERROR(replaceChangedRoleBindings(object, rendered, stop));

  runtime::OwnedSet set;
  for (const policy::RenderedObject& child : rendered) {
    const kube::ResourceType* resource = kube::findResource(
        child.object.value("apiVersion", std::string()), child.object.value("kind", std::string()));
    if (resource == nullptr) {
      return Status(StatusCode::Internal, "no resource for rendered " + describe(child.object));
    }
    // The whole object is the contract's: a field someone else set on it is taken back.
    set.children.push_back({*resource, child.object, child.role, child.group, /*force=*/true});
  }
  set.selector = instanceSelector(backend.metadata.name);
  for (const kube::ResourceType& kind :
       {kube::resources::serviceAccounts(), kube::resources::roles(),
        kube::resources::roleBindings(), kube::resources::daemonSets()}) {
    set.prune.push_back({kind, config_.operator_namespace, childCache(config_, kind)});
  }
  for (const kube::ResourceType& kind :
       {kube::resources::serviceAccounts(), kube::resources::roles(),
        kube::resources::roleBindings(), kube::resources::services(),
        kube::resources::deployments(), kube::resources::daemonSets()}) {
    if (const runtime::Cache* cache = childCache(config_, kind)) {
      set.sources.push_back({kind, config_.operator_namespace, cache});
    }
  }
  auto applied = owned_.apply(object, set, stop);
  if (!applied.ok()) {
    const runtime::OwnedError& error = applied.error();
    return Status(error.status().code(), error.status().message());
  }
  if (!applied->applied.empty() || !applied->pruned.empty()) {
    spdlog::info("backend {}: applied [{}] pruned [{}]", backend.metadata.name,
                 fmt::join(applied->applied, ", "), fmt::join(applied->pruned, ", "));
  }
  KVC_RETURN_IF_ERROR(deleteStaleMembers(backend, rendered, stop));
  return std::optional<std::string>();
}

Status ManagedBackend::replaceChangedRoleBindings(
    const Json& object, const std::vector<policy::RenderedObject>& rendered,
    std::stop_token stop) {
  const kube::Api bindings(config_.client, kube::resources::roleBindings(),
                           config_.operator_namespace);
  for (const policy::RenderedObject& child : rendered) {
    if (child.object.value("kind", std::string()) != "RoleBinding") {
      continue;
    }
    const std::string name = kube::object::name(child.object);
    Json live;
    if (const runtime::Cache* cache = childCache(config_, kube::resources::roleBindings())) {
      if (runtime::ObjectPtr cached = cache->get(config_.operator_namespace + "/" + name)) {
        live = *cached;
      }
    }
    if (!live.is_object()) {
      auto read = bindings.getOptional(name, stop);
      if (!read.ok()) {
        return read.error().status();
      }
      if (!read->has_value()) {
        continue;
      }
      live = **read;
    }
    if (!runtime::carriesNoteFor(live, object) ||
        live.value("roleRef", Json()) == child.object.value("roleRef", Json())) {
      continue;  // not ours (the apply refuses it), or unchanged
    }
    kube::DeleteParams params;
    params.preconditions = kube::Preconditions{kube::object::uid(live), ""};
    auto removed = bindings.remove(name, params, stop);
    if (!removed.ok() && removed.error().reason() != kube::ErrorReason::NotFound) {
      return removed.error().status();
    }
    spdlog::info("backend {}: RoleBinding {} had another roleRef: deleted, to be recreated",
                 kube::object::name(object), name);
  }
  return okStatus();
}

Status ManagedBackend::deleteStaleMembers(const api::KVCacheBackend& backend,
                                          const std::vector<policy::RenderedObject>& rendered,
                                          std::stop_token stop) {
  const kube::Api pods(config_.client, kube::resources::pods(), config_.operator_namespace);
  for (const policy::RenderedObject& child : rendered) {
    if (child.object.value("kind", std::string()) != "DaemonSet" || !child.group) {
      continue;
    }
    const std::string want = child.object.value(
        Json::json_pointer("/spec/template/metadata/annotations/" +
                           std::string("kvcache.gpustack.ai~1pod-spec-hash")),
        std::string());
    for (const Json& pod :
         storePods(backend.metadata.name, policy::memberComponent(*child.group))) {
      const Json annotations =
          pod.value(Json::json_pointer("/metadata/annotations"), Json::object());
      const std::string have =
          annotations.value(std::string(policy::kPodSpecHashAnnotation), std::string());
      if (have == want || kube::object::isDeleting(pod)) {
        continue;
      }
      kube::DeleteParams params;
      params.preconditions = kube::Preconditions{kube::object::uid(pod), ""};
      auto removed = pods.remove(kube::object::name(pod), params, stop);
      if (!removed.ok() && removed.error().reason() != kube::ErrorReason::NotFound) {
        return removed.error().status();
      }
      spdlog::info("backend {}: member Pod {} runs an older template ({}): deleted",
                   backend.metadata.name, kube::object::name(pod),
                   have.empty() ? std::string("no hash") : have.substr(0, 12));
    }
  }
  return okStatus();
}

policy::ManagedBackendFacts ManagedBackend::observe(const api::KVCacheBackend& backend,
                                                    std::optional<std::string> image_error,
                                                    std::stop_token stop) const {
  policy::ManagedBackendFacts facts;
  facts.namespace_name = config_.operator_namespace;
  facts.image_error = std::move(image_error);
  const std::string& b = backend.metadata.name;
  const std::string prefix = config_.operator_namespace + "/";
  if (config_.deployments != nullptr) {
    if (runtime::ObjectPtr deployment = config_.deployments->get(prefix + policy::leaderName(b))) {
      facts.leader_deployment = *deployment;
    }
  }
  facts.leader_pods = storePods(b, policy::leaderComponent());
  facts.pods_listed = config_.store_pods != nullptr;
  if (!facts.pods_listed) {
    facts.pods_error = "no informer on the store's Pods";
  }
  const std::string& created = backend.metadata.creation_timestamp;
  for (std::size_t g = 0; g < backend.spec.members.size(); ++g) {
    policy::MemberGroupObservation group;
    const int index = static_cast<int>(g);
    if (config_.daemon_sets != nullptr) {
      if (runtime::ObjectPtr daemon_set =
              config_.daemon_sets->get(prefix + policy::memberGroupName(b, index))) {
        group.daemon_set = *daemon_set;
      }
    }
    for (Json& pod : storePods(b, policy::memberComponent(index))) {
      const auto age = secondsBetween(created, creationTime(pod));
      group.pods.push_back(
          {std::move(pod), age && *age <= policy::kTierSurveyWindowSeconds});
    }
    facts.groups.push_back(std::move(group));
  }
  const std::string lease_name = policy::leaderName(b);
  Json lease;
  if (config_.leases != nullptr) {
    if (runtime::ObjectPtr cached = config_.leases->get(prefix + lease_name)) {
      lease = *cached;
    }
  } else {
    const kube::Api leases(config_.client, kube::resources::leases(), config_.operator_namespace);
    auto read = leases.getOptional(lease_name, stop);
    if (!read.ok()) {
      facts.lease.state = policy::LeaseObservation::State::Unreadable;
      facts.lease.error = read.error().describe();
    } else if (read->has_value()) {
      lease = **read;
    }
  }
  if (lease.is_object()) {
    facts.lease.state = policy::LeaseObservation::State::Read;
    facts.lease.holder = lease.value(Json::json_pointer("/spec/holderIdentity"), std::string());
    facts.lease.transitions =
        lease.value(Json::json_pointer("/spec/leaseTransitions"), std::int64_t{0});
  }
  return facts;
}

void ManagedBackend::noteHandover(const Json& object, const policy::LeaseObservation& lease) {
  const std::string name = kube::object::name(object);
  std::optional<std::string> message;
  {
    std::lock_guard lock(handover_mutex_);
    if (lease.state == policy::LeaseObservation::State::Absent) {
      handovers_.erase(name);  // a Lease that disappears is forgotten
      return;
    }
    if (lease.state != policy::LeaseObservation::State::Read) {
      return;
    }
    message = policy::leaderHandover(handovers_[name], lease.holder, lease.transitions);
  }
  if (message && config_.events != nullptr) {
    config_.events->event(object, runtime::EventType::Normal, bc::kEventLeaderHandover,
                          "Elect", *message);
  }
}

Result<runtime::Action> ManagedBackend::writeStatus(const Json& object,
                                                    const std::set<std::string>& gone,
                                                    policy::ManagedBackendFacts observed,
                                                    const policy::BackendReading& reading,
                                                    std::stop_token stop) {
  const std::string now = kube::formatTime(config_.clock->wallNow());
  std::optional<std::string> tier_event;
  auto written = status_.update(
      *config_.backends, kube::object::name(object),
      [&](const Json& current) -> Result<Json> {
        policy::ManagedBackendFacts pass = observed;
        KVC_ASSIGN_OR_RETURN(api::KVCacheBackend fresh, api::backendFromJson(current));
        // usedBy as the pool controller last wrote it, minus the pools definitely gone.
        pass.backend = backendConsumers(fresh, gone);
        api::KVCacheBackend::Status status = policy::managedBackendStatus(
            pass, reading, pass.backend.backend.metadata.generation, now);
        tier_event = policy::tierNotEmptyEvent(pass.backend.backend.status, status);
        return api::backendStatusToJson(status);
      },
      stop);
  if (!written.ok()) {
    return written.status();
  }
  if (tier_event && config_.events != nullptr) {
    config_.events->event(object, runtime::EventType::Warning, bc::kEventTierNotEmpty,
                          "Survey", *tier_event);
  }
  return runtime::Action::done();
}

Result<std::string> ManagedBackend::teardown(const Json& object,
                                             const api::KVCacheBackend& backend, bool& done,
                                             std::stop_token stop) {
  const std::string& b = backend.metadata.name;
  const std::string selector = instanceSelector(b);
  // a. Everything carrying this backend's note, in the foreground.
  std::vector<Json> remaining;
  for (const kube::ResourceType& kind :
       {kube::resources::deployments(), kube::resources::daemonSets(),
        kube::resources::services(), kube::resources::roleBindings(), kube::resources::roles(),
        kube::resources::serviceAccounts(), kube::resources::configMaps()}) {
    std::vector<Json> found;
    if (const runtime::Cache* cache = childCache(config_, kind)) {
      for (const runtime::ObjectPtr& child : cache->list()) {
        if (runtime::matchesSelector(*child, selector)) {
          found.push_back(*child);
        }
      }
    } else {
      const kube::Api api(config_.client, kind, config_.operator_namespace);
      kube::ListParams params;
      params.label_selector = selector;
      auto listed = api.list(params, stop);
      if (!listed.ok()) {
        return listed.error().status();
      }
      found = std::move(listed->items);
    }
    const kube::Api api(config_.client, kind, config_.operator_namespace);
    for (Json& child : found) {
      if (!runtime::carriesNoteFor(child, object)) {
        continue;
      }
      if (!kube::object::isDeleting(child)) {
        KVC_RETURN_IF_ERROR(internal::deleteInForeground(api, child, stop));
        spdlog::info("backend {}: deleting {}", b, describe(child));
      }
      remaining.push_back(std::move(child));
    }
  }
  // The store's own Pods go with their workloads; wait for the last of them too.
  std::vector<Json> pods;
  if (config_.store_pods != nullptr) {
    for (const runtime::ObjectPtr& pod : config_.store_pods->list()) {
      const std::string component = label(*pod, kComponentLabel);
      if (label(*pod, kInstanceLabel) == b && component.rfind("tier-clean-", 0) != 0) {
        pods.push_back(*pod);
      }
    }
  }
  if (!remaining.empty() || !pods.empty()) {
    const std::string now = kube::formatTime(config_.clock->wallNow());
    std::vector<std::string> names;
    for (const Json& child : remaining) {
      names.push_back(describe(child));
      const std::string kind = child.value("kind", std::string());
      if (kind != "Deployment" && kind != "DaemonSet") {
        continue;
      }
      const std::string component = label(child, kComponentLabel);
      std::set<std::string> nodes;
      std::int64_t grace = 0;
      for (const Json& pod : pods) {
        if (label(pod, kComponentLabel) == component) {
          nodes.insert(pod.value(Json::json_pointer("/spec/nodeName"), std::string()));
          grace = std::max(grace, pod.value(Json::json_pointer("/spec/terminationGracePeriodSeconds"),
                                            std::int64_t{30}));
        }
      }
      const auto since = secondsBetween(
          child.value(Json::json_pointer("/metadata/deletionTimestamp"), std::string()), now);
      if (!nodes.empty() && since && *since > grace + kWorkloadOverdueSeconds &&
          config_.events != nullptr) {
        std::vector<std::string> node_names(nodes.begin(), nodes.end());
        config_.events->event(
            object, runtime::EventType::Warning, bc::kEventWorkloadNotTerminated, "Delete",
            describe(child) + " still has Pods on " + api::nameList(node_names) + " " +
                std::to_string(*since) +
                " s after its deletion began; check those nodes' kubelets");
      }
    }
    return "deleting the store's workloads: " + api::nameList(names) + " (" +
           std::to_string(pods.size()) + " store Pod" + (pods.size() == 1 ? "" : "s") +
           " left)";
  }
  // b. The Lease the store wrote while electing.
  const kube::Api leases(config_.client, kube::resources::leases(), config_.operator_namespace);
  auto lease_removed = leases.remove(policy::leaderName(b), {}, stop);
  if (!lease_removed.ok() && lease_removed.error().reason() != kube::ErrorReason::NotFound) {
    return lease_removed.error().status();
  }
  // c. The disk tier, then d.
  return cleanTiers(object, backend, done, stop);
}

Result<std::string> ManagedBackend::cleanTiers(const Json& object,
                                               const api::KVCacheBackend& backend, bool& done,
                                               std::stop_token stop) {
  policy::StoreInputs inputs;
  inputs.namespace_name = config_.operator_namespace;
  inputs.settings_image = config_.settings ? config_.settings().kv_cache_backend_image
                                           : std::string(api::kDefaultBackendImage);
  const kube::Api nodes_api(config_.client, kube::resources::nodes());
  const kube::Api pods_api(config_.client, kube::resources::pods(), config_.operator_namespace);
  struct Outcome {
    Json node;
    std::string_view reason;
    std::string note;
  };
  std::vector<Outcome> outcomes;
  std::size_t running = 0;
  for (std::size_t g = 0; g < backend.spec.members.size(); ++g) {
    const api::MemberGroup& group = backend.spec.members[g];
    if (!group.local_disk || !group.local_disk->clean_after_delete) {
      continue;
    }
    const int index = static_cast<int>(g);
    const std::string& path = group.local_disk->path;
    kube::ListParams params;
    params.label_selector = policy::nodeSelectorQuery(group);
    auto nodes = nodes_api.list(params, stop);
    if (!nodes.ok()) {
      return nodes.error().status();
    }
    std::map<std::string, Json> cleaners;
    for (Json& pod : storePods(backend.metadata.name, policy::tierCleanupComponent(index))) {
      // The key first: Json's assignment takes its argument by value, moved before the key
      // would be read.
      std::string node_name = pod.value(Json::json_pointer("/spec/nodeName"), std::string());
      cleaners[std::move(node_name)] = std::move(pod);
    }
    for (const Json& node : nodes->items) {
      const std::string node_name = kube::object::name(node);
      // Another backend's tier on this node at an overlapping path: not ours to empty.
      std::string shared_with;
      for (const runtime::ObjectPtr& other : config_.backends->list()) {
        if (kube::object::name(*other) == backend.metadata.name) {
          continue;
        }
        auto decoded = api::backendFromJson(*other);
        if (!decoded.ok()) {
          continue;
        }
        for (const api::MemberGroup& theirs : decoded->spec.members) {
          if (theirs.local_disk && policy::tierPathsOverlap(theirs.local_disk->path, path) &&
              runtime::matchesSelector(node, policy::nodeSelectorQuery(theirs))) {
            shared_with = decoded->metadata.name;
          }
        }
      }
      if (!shared_with.empty()) {
        outcomes.push_back({node, policy::kEventTierSharedPath,
                            "the tier " + path + " of KVCacheBackend " + backend.metadata.name +
                                " overlaps KVCacheBackend " + shared_with +
                                "'s tier on this node: not emptied"});
        continue;
      }
      auto it = cleaners.find(node_name);
      if (it == cleaners.end()) {
        auto pod = policy::tierCleanupPod(backend, index, node_name, inputs);
        if (!pod.ok()) {
          outcomes.push_back({node, policy::kEventTierNotCleaned,
                              "the tier " + path + " of KVCacheBackend " + backend.metadata.name +
                                  " was not emptied: " + pod.status().message()});
          continue;
        }
        Json intent = std::move(pod).value();
        intent["metadata"]["ownerReferences"] = Json::array({runtime::controllerReferenceTo(object)});
        intent["metadata"]["annotations"][std::string(runtime::kOwnershipNoteAnnotation)] =
            runtime::formatOwnershipNote({std::string(api::kKindBackend), backend.metadata.name,
                                          "tier-cleanup", index});
        auto created = pods_api.create(intent, {}, stop);
        if (!created.ok() && created.error().reason() != kube::ErrorReason::AlreadyExists) {
          return created.error().status();
        }
        ++running;
        continue;
      }
      const Json& pod = it->second;
      const std::string phase = pod.value(Json::json_pointer("/status/phase"), std::string());
      if (phase != "Succeeded" && phase != "Failed") {
        ++running;
        continue;
      }
      std::optional<policy::TierCleanupResult> result;
      for (const Json& status :
           pod.value(Json::json_pointer("/status/containerStatuses"), Json::array())) {
        result = policy::parseTierCleanup(
            status.value(Json::json_pointer("/state/terminated/message"), std::string()));
      }
      const std::string what = "the tier " + path + " of KVCacheBackend " + backend.metadata.name;
      if (!result) {
        outcomes.push_back(
            {node, policy::kEventTierNotCleaned,
             what + " was not emptied: cleanup Pod " + kube::object::name(pod) + " " + phase +
                 " (" + pod.value(Json::json_pointer("/status/reason"), std::string("no result")) +
                 ")"});
      } else if (result->remaining != 0) {
        outcomes.push_back({node, policy::kEventTierPartlyEmptied,
                            what + " was partly emptied: " + policy::formatTierCleanup(*result) +
                                " (see the log of Pod " + config_.operator_namespace + "/" +
                                kube::object::name(pod) + ")"});
      }
    }
  }
  if (running > 0) {
    return "emptying the disk tier (" + std::to_string(running) + " cleanup Pod" +
           (running == 1 ? "" : "s") + " running)";
  }
  if (config_.events != nullptr) {
    for (const Outcome& outcome : outcomes) {
      config_.events->event(outcome.node, runtime::EventType::Warning, outcome.reason, "Clean",
                            outcome.note);
    }
  }
  done = true;
  return std::string("released");
}

}  // namespace kvc::controllers::internal
