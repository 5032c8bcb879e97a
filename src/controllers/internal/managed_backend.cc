#include "internal/managed_backend.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "internal/master_reader.h"
#include "internal/store_objects.h"
#include "kvc/api/backend_conditions.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/policy/store/store_leader.h"
#include "kvc/runtime/events.h"
#include "kvc/runtime/finalizer.h"
#include "kvc/runtime/reader.h"

namespace kvc::controllers::internal {
namespace {

namespace bc = api::backend;

std::string creationTime(const Json& object) {
  return object.value(Json::json_pointer("/metadata/creationTimestamp"), std::string());
}

// The Lease `<b>-leader`: from the cache when there is one (a miss is absent), else live.
policy::LeaseObservation observeLease(const BackendControllerConfig& config,
                                      const std::string& backend, std::stop_token stop) {
  policy::LeaseObservation out;
  const std::string lease_name = policy::leaderName(backend);
  Json lease;
  if (config.leases != nullptr) {
    if (runtime::ObjectPtr cached =
            config.leases->get(config.operator_namespace + "/" + lease_name)) {
      lease = *cached;
    }
  } else {
    const kube::Api leases(config.client, kube::resources::leases(), config.operator_namespace);
    auto read = leases.getOptional(lease_name, stop);
    if (!read.ok()) {
      out.state = policy::LeaseObservation::State::Unreadable;
      out.error = read.error().describe();
    } else if (read->has_value()) {
      lease = **read;
    }
  }
  if (lease.is_object()) {
    out.state = policy::LeaseObservation::State::Read;
    out.holder = lease.value(Json::json_pointer("/spec/holderIdentity"), std::string());
    out.transitions = lease.value(Json::json_pointer("/spec/leaseTransitions"), std::int64_t{0});
  }
  return out;
}

}  // namespace

ManagedBackend::ManagedBackend(const BackendControllerConfig& config,
                               const runtime::StatusWriter& status)
    : config_(config), status_(status), owned_(config.client) {}

Result<runtime::Action> ManagedBackend::reconcile(const Json& object,
                                                  const api::KVCacheBackend& backend,
                                                  const std::set<std::string>& gone,
                                                  std::stop_token stop) {
  policy::ManagedBackendObservation seen = observe(object, backend, gone, stop);
  // The converge stage: the finalizer, then what is rendered (nothing without an image), and
  // what it wrote as the caches show it now.
  const policy::ManagedBackendPlan converging = policy::planManagedBackend(seen);
  if (converging.converges()) {
    KVC_RETURN_IF_ERROR(addFinalizer(object, converging, stop));
    seen.converged = policy::StoreConverge{converge(object, converging, stop)};
    seen.store = observeStore(backend, stop);
  }
  // The report stage: the master, read once per pass and after the converge; then the Events,
  // the status (its conditions stamped with the time of that reading) and the outcome.
  observeMaster(seen);
  seen.now = kube::formatTime(config_.clock->wallNow());
  return act(object, policy::planManagedBackend(seen), seen, stop);
}

// ---- observe ----------------------------------------------------------------------------------

policy::ManagedBackendObservation ManagedBackend::observe(const Json& object,
                                                          const api::KVCacheBackend& backend,
                                                          const std::set<std::string>& gone,
                                                          std::stop_token stop) {
  policy::ManagedBackendObservation seen;
  seen.now = kube::formatTime(config_.clock->wallNow());
  seen.backend = backend;
  seen.gone = gone;
  seen.inputs = storeInputs(config_);
  seen.store = observeStore(backend, stop);
  observeRoleBindings(object, seen, stop);
  {
    std::lock_guard lock(handover_mutex_);
    if (auto it = handovers_.find(backend.metadata.name); it != handovers_.end()) {
      seen.handover = it->second;
    }
  }
  return seen;
}

// The master through the leader Service's admin port, while an image resolves or the leader
// Deployment exists (otherwise nothing could answer).
void ManagedBackend::observeMaster(policy::ManagedBackendObservation& seen) const {
  if (!policy::managedMasterReadable(seen.backend, seen.inputs, seen.store.leader_deployment)) {
    return;
  }
  const std::string admin = api::endpointAddress(
      policy::managedEndpoints(seen.backend.metadata.name, config_.operator_namespace),
      api::kEndpointAdmin);
  auto client = config_.stores(storeTarget(seen.backend, admin, seen.inputs.settings_image));
  if (client.ok()) {
    seen.reading = readBackend(**client);
  } else {
    seen.reading.admin_address = admin;
    seen.reading.health_error = client.status().message();
  }
}

policy::ManagedBackendFacts ManagedBackend::observeStore(const api::KVCacheBackend& backend,
                                                         std::stop_token stop) const {
  policy::ManagedBackendFacts facts;
  facts.namespace_name = config_.operator_namespace;
  const std::string& b = backend.metadata.name;
  const std::string prefix = config_.operator_namespace + "/";
  if (config_.deployments != nullptr) {
    if (runtime::ObjectPtr deployment = config_.deployments->get(prefix + policy::leaderName(b))) {
      facts.leader_deployment = *deployment;
    }
  }
  facts.leader_pods = storePods(config_, b, policy::leaderComponent());
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
    for (Json& pod : storePods(config_, b, policy::memberComponent(index))) {
      const auto age = secondsBetween(created, creationTime(pod));
      std::string mount_failure = mountFailureOf(config_, pod);
      group.pods.push_back({std::move(pod), age && *age <= policy::kTierSurveyWindowSeconds,
                            std::move(mount_failure)});
    }
    facts.groups.push_back(std::move(group));
  }
  facts.lease = observeLease(config_, b, stop);
  return facts;
}

// The election RoleBindings the render names, cached else live: whether each is ours and its
// roleRef (immutable: one of ours whose roleRef changed is replaced). None without an image.
void ManagedBackend::observeRoleBindings(const Json& object,
                                         policy::ManagedBackendObservation& seen,
                                         std::stop_token stop) const {
  if (!policy::storeImage(seen.backend, std::nullopt, seen.inputs).ok()) {
    return;  // nothing is rendered without an image
  }
  const runtime::CachedReader reader(config_.client, kube::resources::roleBindings(),
                                     childCache(config_, kube::resources::roleBindings()));
  for (const policy::RenderedObject& rbac : policy::electionRbac(seen.backend, seen.inputs)) {
    if (rbac.object.value("kind", std::string()) != "RoleBinding") {
      continue;
    }
    const std::string name = kube::object::name(rbac.object);
    auto live = reader.get(config_.operator_namespace, name, stop);
    if (!live.ok()) {
      seen.role_bindings_error = live.status();
      return;
    }
    if (*live) {
      const Json& binding = ***live;
      seen.role_bindings[name] = {kube::object::uid(binding), binding.value("roleRef", Json()),
                                  runtime::carriesNoteFor(binding, object)};
    }
  }
}

// ---- act --------------------------------------------------------------------------------------

Status ManagedBackend::addFinalizer(const Json& object, const policy::ManagedBackendPlan& plan,
                                    std::stop_token stop) {
  if (!plan.add_finalizer) {
    return okStatus();
  }
  const kube::Api backends(config_.client, kube::resources::kvCacheBackends());
  return runtime::addFinalizer(backends, object, bc::kFinalizer, stop);
}

Result<runtime::Action> ManagedBackend::act(const Json& object,
                                            const policy::ManagedBackendPlan& plan,
                                            const policy::ManagedBackendObservation& seen,
                                            std::stop_token stop) {
  KVC_RETURN_IF_ERROR(addFinalizer(object, plan, stop));
  if (plan.render_failed && config_.events != nullptr) {
    config_.events->event(object, runtime::EventType::Warning, policy::kEventRenderFailed, "Apply",
                          *plan.render_failed);
  }
  noteHandover(object, plan);
  KVC_RETURN_IF_ERROR(writeStatus(object, plan, seen, stop));
  if (plan.failure) {
    return *plan.failure;
  }
  return actionFor(plan.next, config_);
}

Status ManagedBackend::converge(const Json& object, const policy::ManagedBackendPlan& plan,
                                std::stop_token stop) {
  KVC_RETURN_IF_ERROR(replaceRoleBindings(object, plan, stop));
  // The seed after the store's objects (a refused apply writes nothing), milliseconds before any
  // leader Pod they make could mount it.
  KVC_RETURN_IF_ERROR(applyStore(object, *plan.apply, stop));
  KVC_RETURN_IF_ERROR(seedTenantPolicy(object, plan, stop));
  return deleteStaleMembers(object, plan, stop);
}

Status ManagedBackend::seedTenantPolicy(const Json& object, const policy::ManagedBackendPlan& plan,
                                        std::stop_token stop) {
  if (!plan.tenant_policy_seed) {
    return okStatus();
  }
  const kube::ResourceType& config_maps = kube::resources::configMaps();
  const runtime::OwnedChild child{config_maps, plan.tenant_policy_seed->object,
                                  plan.tenant_policy_seed->role, std::nullopt, false};
  auto seeded = owned_.seed(
      object, child, {config_maps, config_.operator_namespace, childCache(config_, config_maps)},
      stop);
  if (!seeded.ok()) {
    return Status(seeded.error().status().code(), seeded.error().status().message());
  }
  if (!seeded->applied.empty()) {
    spdlog::info("backend {}: created {} (no tenants yet)", kube::object::name(object),
                 seeded->applied.front());
  }
  return okStatus();
}

Status ManagedBackend::replaceRoleBindings(const Json& object,
                                           const policy::ManagedBackendPlan& plan,
                                           std::stop_token stop) {
  const kube::Api bindings(config_.client, kube::resources::roleBindings(),
                           config_.operator_namespace);
  for (const policy::RoleBindingReplacement& replaced : plan.replace_role_bindings) {
    kube::DeleteParams params;
    params.preconditions = kube::Preconditions{replaced.uid, ""};
    auto removed = bindings.remove(replaced.name, params, stop);
    if (!removed.ok() && removed.error().reason() != kube::ErrorReason::NotFound) {
      return removed.error().status();
    }
    spdlog::info("backend {}: RoleBinding {} had another roleRef: deleted, to be recreated",
                 kube::object::name(object), replaced.name);
  }
  return okStatus();
}

Status ManagedBackend::applyStore(const Json& object,
                                  const std::vector<policy::RenderedObject>& rendered,
                                  std::stop_token stop) {
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
  set.selector = instanceSelector(kube::object::name(object));
  for (const kube::ResourceType& kind :
       {kube::resources::serviceAccounts(), kube::resources::roles(),
        kube::resources::roleBindings(), kube::resources::daemonSets(),
        kube::resources::networkPolicies()}) {
    set.prune.push_back({kind, config_.operator_namespace, childCache(config_, kind)});
  }
  for (const kube::ResourceType& kind :
       {kube::resources::serviceAccounts(), kube::resources::roles(),
        kube::resources::roleBindings(), kube::resources::services(),
        kube::resources::deployments(), kube::resources::daemonSets(),
        kube::resources::networkPolicies()}) {
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
    spdlog::info("backend {}: applied [{}] pruned [{}]", kube::object::name(object),
                 fmt::join(applied->applied, ", "), fmt::join(applied->pruned, ", "));
  }
  return okStatus();
}

Status ManagedBackend::deleteStaleMembers(const Json& object,
                                          const policy::ManagedBackendPlan& plan,
                                          std::stop_token stop) {
  const kube::Api pods(config_.client, kube::resources::pods(), config_.operator_namespace);
  for (const policy::StaleMember& stale : plan.stale_members) {
    kube::DeleteParams params;
    params.preconditions = kube::Preconditions{stale.uid, ""};
    auto removed = pods.remove(stale.name, params, stop);
    if (!removed.ok() && removed.error().reason() != kube::ErrorReason::NotFound) {
      return removed.error().status();
    }
    spdlog::info("backend {}: member Pod {} runs an older template ({}): deleted",
                 kube::object::name(object), stale.name,
                 stale.hash.empty() ? std::string("no hash") : stale.hash.substr(0, 12));
  }
  return okStatus();
}

void ManagedBackend::noteHandover(const Json& object, const policy::ManagedBackendPlan& plan) {
  const std::string name = kube::object::name(object);
  {
    std::lock_guard lock(handover_mutex_);
    if (plan.forget_handover) {
      handovers_.erase(name);
    } else if (plan.handover_baseline) {
      handovers_[name] = *plan.handover_baseline;
    }
  }
  if (config_.metrics != nullptr) {
    // Created at 0 with the backend's first pass, so that increase() sees the first handover.
    runtime::Counter& handovers =
        config_.metrics
            ->counter("kvcache_backend_leader_handovers_total",
                      "Times a managed backend's master Lease moved to another holder (a failover "
                      "or a handover), as the leading operator replica saw them.",
                      {"backend"})
            .with({name});
    if (plan.handover) {
      handovers.inc();
    }
  }
  if (plan.handover && config_.events != nullptr) {
    config_.events->event(object, runtime::EventType::Normal, bc::kEventLeaderHandover, "Elect",
                          *plan.handover);
  }
}

Status ManagedBackend::writeStatus(const Json& object, const policy::ManagedBackendPlan& plan,
                                   const policy::ManagedBackendObservation& seen,
                                   std::stop_token stop) {
  std::optional<std::string> tier_event;
  auto written = status_.update(
      *config_.backends, kube::object::name(object),
      [&](const Json& current) -> Result<Json> {
        if (kube::object::resourceVersion(current) == seen.backend.metadata.resource_version) {
          tier_event = plan.status->tier_not_empty;
          return api::backendStatusToJson(plan.status->status);
        }
        // A newer backend (usedBy moved, a conflict): decided again from it, same facts.
        KVC_ASSIGN_OR_RETURN(api::KVCacheBackend fresh, api::backendFromJson(current));
        policy::ManagedStatusPlan moved = policy::managedStatusFor(seen, fresh);
        tier_event = std::move(moved.tier_not_empty);
        return api::backendStatusToJson(moved.status);
      },
      stop);
  if (!written.ok()) {
    return written.status();
  }
  if (tier_event && config_.events != nullptr) {
    config_.events->event(object, runtime::EventType::Warning, bc::kEventTierNotEmpty, "Survey",
                          *tier_event);
  }
  return okStatus();
}

}  // namespace kvc::controllers::internal
