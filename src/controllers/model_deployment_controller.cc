#include "kvc/controllers/model_deployment_controller.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <variant>

#include "internal/cache_cluster_view.h"
#include "internal/foreground_delete.h"
#include "kvc/api/binding.h"
#include "kvc/api/model_deployment_conditions.h"
#include "kvc/controllers/indexes.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/policy/inject/resolve.h"
#include "kvc/policy/model_deployment/model_deployment_plan.h"
#include "kvc/policy/model_deployment/model_deployment_replicas.h"
#include "kvc/runtime/finalizer.h"

namespace kvc::controllers {
namespace {

namespace md_api = api::model_deployment;

std::string workloadSelector(std::string_view md) {
  return roleWorkloadSelector() + ",app.kubernetes.io/instance=" + std::string(md);
}

// The role Deployments of `md` the cache holds that carry our note for it.
std::vector<Json> ownedWorkloads(const runtime::Cache& workloads, const Json& owner) {
  std::vector<Json> out;
  const std::string selector = workloadSelector(kube::object::name(owner));
  const std::string namespace_name = kube::object::namespaceName(owner);
  for (const runtime::ObjectPtr& child : workloads.list()) {
    if (kube::object::namespaceName(*child) == namespace_name &&
        runtime::matchesSelector(*child, selector) && runtime::carriesNoteFor(*child, owner)) {
      out.push_back(*child);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> modelDeploymentBinding(const Json& deployment) {
  const std::string binding = stringAt(deployment, {"spec", "kvCache", "poolRef", "name"});
  if (binding.empty()) {
    return {};
  }
  return {kube::object::namespaceName(deployment) + "/" + binding};
}

std::string roleWorkloadSelector() {
  return "app.kubernetes.io/name=" + std::string(policy::kModelDeploymentAppName);
}

std::vector<std::string> replicaDeployment(const Json& pod) {
  std::string key = policy::replicaOwnerKey(pod);
  if (key.empty()) {
    return {};
  }
  return {std::move(key)};
}

runtime::Transform replicaPodProjection() {
  std::vector<std::string> fields = {"/metadata/annotations/kvcache.gpustack.ai~1pod-spec-hash",
                                     "/metadata/deletionGracePeriodSeconds",
                                     "/spec/nodeName",
                                     "/status/phase",
                                     "/status/reason",
                                     "/status/message",
                                     "/status/podIP",
                                     "/status/conditions",
                                     "/status/containerStatuses"};
  fields.insert(fields.end(), kEngineContainerFields.begin(), kEngineContainerFields.end());
  return runtime::keepFields(std::move(fields));
}

void recordReplicaTransition(const runtime::Cache& deployments, runtime::EventRecorder& events,
                             const Json& before, const Json& after) {
  const std::string key = policy::replicaOwnerKey(after);
  if (key.empty()) {
    return;
  }
  const std::vector<policy::ModelDeploymentEvent> said =
      policy::replicaTransitionEvents(before, after);
  if (said.empty()) {
    return;
  }
  runtime::ObjectPtr deployment = deployments.get(key);
  if (!deployment) {
    return;  // not one this operator reconciles (or already gone)
  }
  for (const policy::ModelDeploymentEvent& event : said) {
    events.event(*deployment,
                 event.type == "Warning" ? runtime::EventType::Warning : runtime::EventType::Normal,
                 event.reason, "ObserveReplica", event.message);
  }
}

ModelDeploymentReconciler::ModelDeploymentReconciler(ModelDeploymentControllerConfig config)
    : config_(std::move(config)),
      status_(config_.client, kube::resources::modelDeployments(), config_.metrics, *config_.clock),
      binding_status_(config_.client, kube::resources::kvCachePoolBindings(), config_.metrics,
                      *config_.clock, runtime::StatusWriter::Generation::Keep),
      owned_(config_.client) {}

Result<runtime::Action> ModelDeploymentReconciler::reconcile(const runtime::Request& request,
                                                             std::stop_token stop) {
  runtime::ObjectPtr object =
      config_.deployments->get(kube::object::key(request.namespace_name, request.name));
  if (!object) {
    return runtime::Action::done();
  }
  KVC_ASSIGN_OR_RETURN(api::ModelDeployment md, api::modelDeploymentFromJson(*object));
  const kube::Api api(config_.client, kube::resources::modelDeployments(),
                      md.metadata.namespace_name);
  return runtime::reconcileWithFinalizer(
      api, *object, md_api::kFinalizer,
      [&](const Json& current) { return converge(current, md, stop); },
      [&](const Json& current) { return teardown(current, md, stop); }, stop);
}

Result<runtime::Action> ModelDeploymentReconciler::converge(const Json& object,
                                                            const api::ModelDeployment& md,
                                                            std::stop_token stop) {
  KVC_ASSIGN_OR_RETURN(policy::ModelDeploymentObservation seen, observe(md));
  KVC_RETURN_IF_ERROR(observeLive(seen));
  // The apply stage: the role workloads and the endpoint Service (nothing when the render
  // fails), and what it wrote as the caches show it now.
  const policy::ModelDeploymentPlan applying = policy::planModelDeployment(seen);
  if (applying.applies()) {
    KVC_ASSIGN_OR_RETURN(seen.applied, applyWorkloads(object, applying, stop));
    observeWorkloads(seen);
    seen.now = kube::formatTime(config_.clock->wallNow());
  }
  // The report stage: the Binding's note, the status, the runtime skew.
  return act(object, policy::planModelDeployment(seen), seen, stop);
}

Result<runtime::Action> ModelDeploymentReconciler::teardown(const Json& object,
                                                            const api::ModelDeployment& md,
                                                            std::stop_token stop) {
  KVC_ASSIGN_OR_RETURN(policy::ModelDeploymentObservation seen, observe(md));
  KVC_RETURN_IF_ERROR(observeDeleting(object, seen, stop));
  return actTeardown(object, policy::planModelDeploymentTeardown(seen), seen, stop);
}

// ---- observe ----------------------------------------------------------------------------------

Result<policy::ModelDeploymentObservation> ModelDeploymentReconciler::observe(
    const api::ModelDeployment& md) const {
  policy::ModelDeploymentObservation seen;
  seen.now = kube::formatTime(config_.clock->wallNow());
  seen.deployment = md;
  const std::string& namespace_name = md.metadata.namespace_name;
  if (md.spec.kv_cache) {
    const internal::CacheClusterView view(*config_.bindings, *config_.pools, *config_.backends);
    KVC_ASSIGN_OR_RETURN(seen.binding, view.binding(namespace_name, md.spec.kv_cache->pool_ref));
  }
  observeWorkloads(seen);
  return seen;
}

// Its role Deployments and its endpoint Service, as cached.
void ModelDeploymentReconciler::observeWorkloads(policy::ModelDeploymentObservation& seen) const {
  const api::ModelDeployment& md = seen.deployment;
  const std::string& namespace_name = md.metadata.namespace_name;
  seen.role_deployments.clear();
  for (const api::ModelDeploymentRole& role : md.spec.roles) {
    if (runtime::ObjectPtr live = config_.workloads->get(kube::object::key(
            namespace_name, policy::roleWorkloadName(md.metadata.name, role.name)))) {
      seen.role_deployments[role.name] = *live;
    }
  }
  seen.service_exists =
      config_.services != nullptr &&
      config_.services->get(kube::object::key(namespace_name, md.metadata.name)) != nullptr;
}

// What spec.kvCache leads to (resolved as Pod injection resolves it), the endpoint Service, the
// engine Pods, and the skew last reported.
Status ModelDeploymentReconciler::observeLive(policy::ModelDeploymentObservation& seen) {
  const api::ModelDeployment& md = seen.deployment;
  const std::string& namespace_name = md.metadata.namespace_name;
  const std::string key = kube::object::key(namespace_name, md.metadata.name);
  seen.settings = config_.settings ? config_.settings() : api::Settings{};
  if (auto runtime = policy::modelDeploymentRuntime(md); runtime.ok() && seen.binding) {
    const internal::CacheClusterView view(*config_.bindings, *config_.pools, *config_.backends);
    policy::ResolveOutcome resolved =
        policy::resolveBinding(namespace_name, md.spec.kv_cache->pool_ref, runtime->engine, view);
    if (const Status* failed = std::get_if<Status>(&resolved)) {
      return failed->withContext("resolving spec.kvCache.poolRef of ModelDeployment " + key);
    }
    if (auto* resolution = std::get_if<policy::Resolution>(&resolved)) {
      seen.resolution = *resolution;
    } else {
      seen.refusal = std::get<policy::Refusal>(resolved);
    }
  }
  if (config_.replicas != nullptr) {
    std::vector<Json> pods;
    for (const runtime::ObjectPtr& pod : config_.replicas->byIndex(kReplicasByDeployment, key)) {
      pods.push_back(*pod);
    }
    seen.replicas = std::move(pods);
  }
  std::lock_guard<std::mutex> guard(skew_mutex_);
  if (auto it = skew_reported_.find(key); it != skew_reported_.end()) {
    seen.skew_reported = it->second;
  }
  return okStatus();
}

// Its role Deployments carrying its note (cached), and the Pods of its roles, terminating ones
// included, read live: the cache holds no Pods of theirs.
Status ModelDeploymentReconciler::observeDeleting(const Json& object,
                                                  policy::ModelDeploymentObservation& seen,
                                                  std::stop_token stop) const {
  const api::ModelDeployment& md = seen.deployment;
  const std::string& namespace_name = md.metadata.namespace_name;
  seen.owned_workloads = ownedWorkloads(*config_.workloads, object);
  const kube::Api pods(config_.client, kube::resources::pods(), namespace_name);
  kube::ListParams params;
  params.label_selector = workloadSelector(md.metadata.name);
  auto listed = pods.list(params, stop);
  if (!listed.ok()) {
    return listed.error().status().withContext("listing the Pods of ModelDeployment " +
                                               kube::object::key(namespace_name, md.metadata.name));
  }
  seen.pods_left = static_cast<std::int64_t>(listed->items.size());
  return okStatus();
}

// ---- act --------------------------------------------------------------------------------------

Result<runtime::Action> ModelDeploymentReconciler::act(
    const Json& object, const policy::ModelDeploymentPlan& plan,
    const policy::ModelDeploymentObservation& seen, std::stop_token stop) {
  // The Binding holds a note of the deployment while it exists (its deletion waits for it).
  if (plan.hold_binding) {
    KVC_RETURN_IF_ERROR(noteOnBinding(seen.deployment, *plan.hold_binding, stop));
  }
  KVC_RETURN_IF_ERROR(writeStatus(plan, seen, stop));
  reportRuntimeSkew(object, plan);
  return runtime::Action::requeueAfter(config_.resync);
}

Result<runtime::Action> ModelDeploymentReconciler::actTeardown(
    const Json& object, const policy::ModelDeploymentPlan& plan,
    const policy::ModelDeploymentObservation& seen, std::stop_token stop) {
  const api::ModelDeployment& md = seen.deployment;
  const std::string& namespace_name = md.metadata.namespace_name;
  // The role Deployments first, in the foreground: each goes once its Pods have.
  const kube::Api deployments(config_.client, kube::resources::deployments(), namespace_name);
  for (const Json& child : plan.delete_in_foreground) {
    KVC_RETURN_IF_ERROR(internal::deleteInForeground(deployments, child, stop));
    spdlog::info("modeldeployment {}/{}: deleting Deployment {}", namespace_name, md.metadata.name,
                 kube::object::name(child));
  }
  KVC_RETURN_IF_ERROR(writeStatus(plan, seen, stop));
  if (plan.next == policy::ModelDeploymentNext::DeletingPoll) {
    return runtime::Action::requeueAfter(config_.deleting_poll);
  }
  reportRuntimeSkew(object, plan);
  // Gone: nothing writes under the Binding's domain any more.
  if (plan.hold_binding) {
    KVC_RETURN_IF_ERROR(noteOnBinding(md, *plan.hold_binding, stop));
  }
  spdlog::info("modeldeployment {}/{}: released (its Deployments and Pods are gone)",
               namespace_name, md.metadata.name);
  return runtime::Action::done();
}

Result<policy::WorkloadApply> ModelDeploymentReconciler::applyWorkloads(
    const Json& object, const policy::ModelDeploymentPlan& plan, std::stop_token stop) {
  const std::string namespace_name = kube::object::namespaceName(object);
  const std::string name = kube::object::name(object);
  runtime::OwnedSet set;
  for (const policy::RenderedRole& role : *plan.apply) {
    // The whole Deployment is the contract's: a field someone else set on it is taken back.
    set.children.push_back(
        {kube::resources::deployments(), role.deployment, role.name, std::nullopt, /*force=*/true});
  }
  if (plan.service) {
    set.children.push_back(
        {kube::resources::services(), *plan.service, "endpoint", std::nullopt, /*force=*/true});
  }
  set.selector = workloadSelector(name);
  set.prune.push_back({kube::resources::deployments(), namespace_name, config_.workloads});
  set.prune.push_back({kube::resources::services(), namespace_name, config_.services});
  set.sources.push_back({kube::resources::deployments(), namespace_name, config_.workloads});
  set.sources.push_back({kube::resources::services(), namespace_name, config_.services});
  auto applied = owned_.apply(object, set, stop);
  if (!applied.ok()) {
    const runtime::OwnedError& error = applied.error();
    if (error.kind() != runtime::OwnedErrorKind::NotOurs) {
      return Status(error.status().code(), error.status().message());
    }
    // A same-named Deployment that is not ours: never adopted; the user renames or removes it.
    return policy::WorkloadApply{error.status().message()};
  }
  if (!applied->applied.empty() || !applied->pruned.empty()) {
    spdlog::info("modeldeployment {}/{}: applied [{}] pruned [{}]", namespace_name, name,
                 fmt::join(applied->applied, ", "), fmt::join(applied->pruned, ", "));
  }
  return policy::WorkloadApply{};
}

Status ModelDeploymentReconciler::writeStatus(const policy::ModelDeploymentPlan& plan,
                                              const policy::ModelDeploymentObservation& seen,
                                              std::stop_token stop) {
  const api::ModelDeployment& md = seen.deployment;
  std::vector<policy::ModelDeploymentEvent> events;
  auto written = status_.update(
      *config_.deployments, kube::object::key(md.metadata.namespace_name, md.metadata.name),
      [&](const Json& current) -> Result<Json> {
        if (kube::object::resourceVersion(current) == md.metadata.resource_version) {
          events = plan.status->events;
          return api::modelDeploymentStatusToJson(plan.status->status);
        }
        // A newer deployment (a conflict): decided again from it with the same facts.
        KVC_ASSIGN_OR_RETURN(api::ModelDeployment fresh, api::modelDeploymentFromJson(current));
        policy::ModelDeploymentStatusPlan moved =
            policy::modelDeploymentStatusFor(plan.status->facts, fresh, seen.now);
        events = std::move(moved.events);
        return api::modelDeploymentStatusToJson(moved.status);
      },
      stop);
  if (!written.ok()) {
    return written.status();
  }
  if (config_.events != nullptr && written->outcome == runtime::StatusWriteOutcome::Written) {
    for (const policy::ModelDeploymentEvent& event : events) {
      config_.events->event(
          written->object,
          event.type == "Warning" ? runtime::EventType::Warning : runtime::EventType::Normal,
          event.reason, "Render", event.message);
    }
  }
  return okStatus();
}

void ModelDeploymentReconciler::reportRuntimeSkew(const Json& object,
                                                  const policy::ModelDeploymentPlan& plan) {
  const std::string key = kube::object::key(object);
  {
    std::lock_guard<std::mutex> guard(skew_mutex_);
    if (plan.forget_skew) {
      skew_reported_.erase(key);
    } else if (plan.skew_signature) {
      skew_reported_[key] = *plan.skew_signature;
    }
  }
  if (plan.skew_event && config_.events != nullptr) {
    config_.events->event(object, runtime::EventType::Warning, plan.skew_event->reason,
                          "ObserveReplica", plan.skew_event->message);
  }
}

Status ModelDeploymentReconciler::noteOnBinding(const api::ModelDeployment& md, bool hold,
                                                std::stop_token stop) {
  const std::string key = kube::object::key(md.metadata.namespace_name, md.spec.kv_cache->pool_ref);
  if (!config_.bindings->get(key)) {
    return okStatus();  // no Binding to hold (a later one is noted when it appears)
  }
  auto written = binding_status_.update(
      *config_.bindings, key,
      [&](const Json& current) -> Result<Json> {
        // Only usedBy is ours; the pool controller's figures and conditions are kept as read.
        Json status = current.value("status", Json::object());
        KVC_ASSIGN_OR_RETURN(
            std::vector<api::ObjectReference> used_by,
            api::objectReferencesFromJson(status.value("usedBy", Json()), "status.usedBy"));
        if (!policy::setBindingUsedBy(used_by, md.metadata.name, hold)) {
          return status;
        }
        if (used_by.empty()) {
          status.erase("usedBy");
        } else {
          status["usedBy"] = api::objectReferencesToJson(used_by);
        }
        return status;
      },
      stop);
  if (!written.ok()) {
    return written.status().withContext("noting ModelDeployment " + md.metadata.name +
                                        " in the status.usedBy of KVCachePoolBinding " + key);
  }
  return okStatus();
}

}  // namespace kvc::controllers
