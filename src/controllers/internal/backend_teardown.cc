#include "internal/backend_teardown.h"

#include <spdlog/spdlog.h>

#include "internal/foreground_delete.h"
#include "internal/store_objects.h"
#include "kvc/api/backend_conditions.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/policy/store/tier_cleanup.h"
#include "kvc/runtime/events.h"
#include "kvc/runtime/finalizer.h"
#include "kvc/runtime/owned.h"

namespace kvc::controllers::internal {
namespace {

namespace bc = api::backend;

// The kinds the store is made of, in the order the teardown deletes them (its NetworkPolicies
// only once no store Pod is left: policy/teardown_plan.h).
const std::vector<kube::ResourceType>& storeKinds() {
  static const std::vector<kube::ResourceType> kKinds = {
      kube::resources::deployments(), kube::resources::daemonSets(),
      kube::resources::services(),    kube::resources::roleBindings(),
      kube::resources::roles(),       kube::resources::serviceAccounts(),
      kube::resources::configMaps(),  kube::resources::networkPolicies()};
  return kKinds;
}

const kube::ResourceType& storeKind(const std::string& plural) {
  for (const kube::ResourceType& kind : storeKinds()) {
    if (kind.plural == plural) {
      return kind;
    }
  }
  return storeKinds().front();  // every StoreChild was observed through one of them
}

}  // namespace

Result<runtime::Action> BackendTeardown::reconcile(const Json& object,
                                                   const api::KVCacheBackend& backend,
                                                   const std::set<std::string>& gone,
                                                   std::stop_token stop) {
  const std::string context = "tearing down KVCacheBackend " + backend.metadata.name;
  auto seen = observe(object, backend, gone, stop);
  if (!seen.ok()) {
    return seen.status().withContext(context);
  }
  const policy::TeardownPlan plan = policy::planTeardown(*seen);
  if (Status done = act(object, plan, stop); !done.ok()) {
    return done.withContext(context);
  }
  if (plan.release) {
    return release(plan, *seen, stop);
  }
  KVC_RETURN_IF_ERROR(writeStatus(plan, *seen, stop));
  return actionFor(plan.next, config_);
}

// ---- observe ----------------------------------------------------------------------------------

Result<policy::TeardownObservation> BackendTeardown::observe(const Json& object,
                                                             const api::KVCacheBackend& backend,
                                                             const std::set<std::string>& gone,
                                                             std::stop_token stop) const {
  policy::TeardownObservation seen;
  seen.now = kube::formatTime(config_.clock->wallNow());
  seen.backend = backend;
  seen.gone = gone;
  seen.inputs = storeInputs(config_);
  KVC_RETURN_IF_ERROR(observeChildren(object, seen, stop));
  if (policy::storeWorkloadsGone(seen)) {
    KVC_RETURN_IF_ERROR(observeTiers(seen, stop));
  }
  return seen;
}

// Everything carrying this backend's note, and the store's own Pods (its workloads take them
// along; the teardown waits for the last of them too).
Status BackendTeardown::observeChildren(const Json& object, policy::TeardownObservation& seen,
                                        std::stop_token stop) const {
  const std::string& b = seen.backend.metadata.name;
  const std::string selector = instanceSelector(b);
  for (const kube::ResourceType& kind : storeKinds()) {
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
    for (Json& child : found) {
      if (!runtime::carriesNoteFor(child, object)) {
        continue;
      }
      const auto since = secondsBetween(
          child.value(Json::json_pointer("/metadata/deletionTimestamp"), std::string()), seen.now);
      seen.children.push_back({kind.plural, std::move(child), since});
    }
  }
  if (config_.store_pods != nullptr) {
    for (const runtime::ObjectPtr& pod : config_.store_pods->list()) {
      const std::string component = label(*pod, kComponentLabel);
      if (label(*pod, kInstanceLabel) == b && component.rfind("tier-clean-", 0) != 0) {
        seen.store_pods.push_back(*pod);
      }
    }
  }
  return okStatus();
}

// Step c's inputs: per group with cleanAfterDelete, the Nodes it selects and its cleanup Pods;
// the other backends.
Status BackendTeardown::observeTiers(policy::TeardownObservation& seen,
                                     std::stop_token stop) const {
  const api::KVCacheBackend& backend = seen.backend;
  const kube::Api nodes_api(config_.client, kube::resources::nodes());
  for (std::size_t g = 0; g < backend.spec.members.size(); ++g) {
    const api::MemberGroup& group = backend.spec.members[g];
    if (!group.local_disk || !group.local_disk->clean_after_delete) {
      continue;
    }
    const int index = static_cast<int>(g);
    kube::ListParams params;
    params.label_selector = policy::nodeSelectorQuery(group);
    auto nodes = nodes_api.list(params, stop);
    if (!nodes.ok()) {
      return nodes.error().status();
    }
    seen.tiers.push_back(
        {index, std::move(nodes->items),
         storePods(config_, backend.metadata.name, policy::tierCleanupComponent(index))});
  }
  if (seen.tiers.empty()) {
    return okStatus();
  }
  for (const runtime::ObjectPtr& other : config_.backends->list()) {
    if (kube::object::name(*other) == backend.metadata.name) {
      continue;
    }
    if (auto decoded = api::backendFromJson(*other); decoded.ok()) {
      seen.other_backends.push_back(std::move(decoded).value());
    }
  }
  return okStatus();
}

// ---- act --------------------------------------------------------------------------------------

Status BackendTeardown::act(const Json& object, const policy::TeardownPlan& plan,
                            std::stop_token stop) const {
  const std::string b = kube::object::name(object);
  // a.
  for (const policy::StoreChild& child : plan.delete_in_foreground) {
    const kube::Api api(config_.client, storeKind(child.resource), config_.operator_namespace);
    KVC_RETURN_IF_ERROR(deleteInForeground(api, child.object, stop));
    spdlog::info("backend {}: deleting {}", b, describe(child.object));
  }
  if (config_.events != nullptr) {
    for (const std::string& message : plan.workload_not_terminated) {
      config_.events->event(object, runtime::EventType::Warning, bc::kEventWorkloadNotTerminated,
                            "Delete", message);
    }
  }
  // b.
  if (plan.delete_lease) {
    const kube::Api leases(config_.client, kube::resources::leases(), config_.operator_namespace);
    auto removed = leases.remove(policy::leaderName(b), {}, stop);
    if (!removed.ok() && removed.error().reason() != kube::ErrorReason::NotFound) {
      return removed.error().status();
    }
  }
  // c.
  KVC_RETURN_IF_ERROR(createCleaners(object, plan, stop));
  if (config_.events != nullptr) {
    for (const policy::NodeEvent& event : plan.node_events) {
      config_.events->event(event.node, runtime::EventType::Warning, event.reason, "Clean",
                            event.message);
    }
  }
  return okStatus();
}

Status BackendTeardown::createCleaners(const Json& object, const policy::TeardownPlan& plan,
                                       std::stop_token stop) const {
  const kube::Api pods(config_.client, kube::resources::pods(), config_.operator_namespace);
  for (const policy::CleanupPodPlan& cleaner : plan.create_cleaners) {
    Json intent = cleaner.pod;
    intent["metadata"]["ownerReferences"] = Json::array({runtime::controllerReferenceTo(object)});
    intent["metadata"]["annotations"][std::string(runtime::kOwnershipNoteAnnotation)] =
        runtime::formatOwnershipNote({std::string(api::kKindBackend), kube::object::name(object),
                                      "tier-cleanup", cleaner.group});
    auto created = pods.create(intent, {}, stop);
    if (!created.ok() && created.error().reason() != kube::ErrorReason::AlreadyExists) {
      return created.error().status();
    }
  }
  return okStatus();
}

// d. The finalizer goes (the cleanup Pods go with the backend: it owns them).
Result<runtime::Action> BackendTeardown::release(const policy::TeardownPlan& plan,
                                                 const policy::TeardownObservation& seen,
                                                 std::stop_token stop) const {
  const std::string& b = seen.backend.metadata.name;
  if (plan.remove_finalizer) {
    if (runtime::ObjectPtr latest = config_.backends->get(b)) {
      const kube::Api backends(config_.client, kube::resources::kvCacheBackends());
      Status removed = runtime::removeFinalizer(backends, *latest, bc::kFinalizer, stop);
      if (!removed.ok() && removed.code() != StatusCode::NotFound) {
        return removed.withContext("releasing KVCacheBackend " + b);
      }
    }
  }
  spdlog::info("backend {}: torn down and released", b);
  return runtime::Action::done();
}

Status BackendTeardown::writeStatus(const policy::TeardownPlan& plan,
                                    const policy::TeardownObservation& seen,
                                    std::stop_token stop) const {
  auto written = status_.update(
      *config_.backends, seen.backend.metadata.name,
      [&](const Json& current) -> Result<Json> {
        if (kube::object::resourceVersion(current) == seen.backend.metadata.resource_version) {
          return api::backendStatusToJson(plan.status->status);
        }
        KVC_ASSIGN_OR_RETURN(api::KVCacheBackend fresh, api::backendFromJson(current));
        return api::backendStatusToJson(policy::teardownStatusFor(seen, *plan.where, fresh).status);
      },
      stop);
  return written.ok() ? okStatus() : written.status();
}

}  // namespace kvc::controllers::internal
