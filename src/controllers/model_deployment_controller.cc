#include "kvc/controllers/model_deployment_controller.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <variant>

#include "internal/cache_cluster_view.h"
#include "internal/foreground_delete.h"
#include "kvc/api/binding.h"
#include "kvc/api/model_deployment_conditions.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/policy/store/store_workload.h"
#include "kvc/policy/model_deployment/model_deployment_endpoint.h"
#include "kvc/policy/model_deployment/model_deployment_render.h"
#include "kvc/policy/model_deployment/model_deployment_replicas.h"
#include "kvc/policy/model_deployment/model_deployment_status.h"
#include "kvc/policy/inject/resolve.h"
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
  const std::string ns = kube::object::namespaceName(owner);
  for (const runtime::ObjectPtr& child : workloads.list()) {
    if (kube::object::namespaceName(*child) == ns && runtime::matchesSelector(*child, selector) &&
        runtime::carriesNoteFor(*child, owner)) {
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
  return runtime::keepFields({"/metadata/annotations/kvcache.gpustack.ai~1pod-spec-hash",
                              "/metadata/deletionGracePeriodSeconds", "/spec/nodeName",
                              "/status/phase", "/status/reason", "/status/message",
                              "/status/conditions", "/status/containerStatuses"});
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
      status_(config_.client, kube::resources::modelDeployments(), config_.metrics,
              *config_.clock),
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
  const std::string& ns = md.metadata.namespace_name;
  policy::ModelDeploymentFacts facts;
  facts.deployment = md;

  // The runtime, then what spec.kvCache leads to (resolved as Pod injection resolves it).
  policy::ModelDeploymentInputs inputs;
  inputs.settings = config_.settings ? config_.settings() : api::Settings{};
  std::optional<policy::Engine> engine;
  if (auto manufacturer = policy::modelDeploymentManufacturer(md); !manufacturer.ok()) {
    facts.render_error = manufacturer.status().message();
  } else if (auto found = policy::modelDeploymentEngine(md, *manufacturer); !found.ok()) {
    facts.render_error = found.status().message();
  } else {
    inputs.manufacturer = *manufacturer;
    engine = *found;
  }
  const internal::CacheClusterView view(*config_.bindings, *config_.pools, *config_.backends);
  if (md.spec.kv_cache) {
    KVC_ASSIGN_OR_RETURN(facts.binding, view.binding(ns, md.spec.kv_cache->pool_ref));
    if (facts.binding && engine) {
      policy::ResolveOutcome resolved =
          policy::resolveBinding(ns, md.spec.kv_cache->pool_ref, *engine, view);
      if (const Status* failed = std::get_if<Status>(&resolved)) {
        return failed->withContext("resolving spec.kvCache.poolRef of ModelDeployment " +
                                   kube::object::key(ns, md.metadata.name));
      }
      if (auto* resolution = std::get_if<policy::Resolution>(&resolved)) {
        facts.resolution = *resolution;
        inputs.binding = *resolution;
      } else {
        facts.refusal = std::get<policy::Refusal>(resolved);
      }
    }
  }

  // The role workloads: rendered, then applied — or nothing at all when the render fails, so
  // what runs keeps running.
  std::vector<policy::RenderedRole> rendered;
  if (!facts.render_error) {
    if (auto roles = policy::renderModelDeployment(md, inputs); roles.ok()) {
      rendered = std::move(roles).value();
    } else {
      facts.render_error = roles.status().message();
    }
  }
  if (!facts.render_error) {
    runtime::OwnedSet set;
    for (const policy::RenderedRole& role : rendered) {
      // The whole Deployment is the contract's: a field someone else set on it is taken back.
      set.children.push_back({kube::resources::deployments(), role.deployment, role.name,
                              std::nullopt, /*force=*/true});
    }
    const std::optional<Json> service = policy::renderEndpointService(md);
    if (service) {
      set.children.push_back(
          {kube::resources::services(), *service, "endpoint", std::nullopt, /*force=*/true});
    }
    set.selector = workloadSelector(md.metadata.name);
    set.prune.push_back({kube::resources::deployments(), ns, config_.workloads});
    set.prune.push_back({kube::resources::services(), ns, config_.services});
    set.sources.push_back({kube::resources::deployments(), ns, config_.workloads});
    set.sources.push_back({kube::resources::services(), ns, config_.services});
    auto applied = owned_.apply(object, set, stop);
    if (!applied.ok()) {
      const runtime::OwnedError& error = applied.error();
      if (error.kind() != runtime::OwnedErrorKind::NotOurs) {
        return Status(error.status().code(), error.status().message());
      }
      // A same-named Deployment that is not ours: never adopted; the user renames or removes it.
      facts.render_error = error.status().message();
      rendered.clear();
    } else {
      if (service) {
        facts.endpoint = policy::endpointAddress(md);
      }
      if (!applied->applied.empty() || !applied->pruned.empty()) {
        spdlog::info("modeldeployment {}/{}: applied [{}] pruned [{}]", ns, md.metadata.name,
                     fmt::join(applied->applied, ", "), fmt::join(applied->pruned, ", "));
      }
    }
  }
  if (facts.render_error && config_.services != nullptr &&
      config_.services->get(kube::object::key(ns, md.metadata.name))) {
    facts.endpoint = policy::endpointAddress(md);  // nothing applied: the Service still fronts
  }

  // The Binding holds a note of the deployment while it exists (its deletion waits for it).
  if (md.spec.kv_cache) {
    KVC_RETURN_IF_ERROR(noteOnBinding(md, /*hold=*/true, stop));
  }
  facts.roles = roleFacts(md, rendered);
  KVC_RETURN_IF_ERROR(writeStatus(object, facts, stop));
  reportRuntimeSkew(object, facts.roles);
  return runtime::Action::requeueAfter(config_.resync);
}

Result<runtime::Action> ModelDeploymentReconciler::teardown(const Json& object,
                                                            const api::ModelDeployment& md,
                                                            std::stop_token stop) {
  const std::string& ns = md.metadata.namespace_name;
  // The role Deployments first, in the foreground: each goes once its Pods have.
  const kube::Api deployments(config_.client, kube::resources::deployments(), ns);
  for (const Json& child : ownedWorkloads(*config_.workloads, object)) {
    if (kube::object::isDeleting(child)) {
      continue;
    }
    KVC_RETURN_IF_ERROR(internal::deleteInForeground(deployments, child, stop));
    spdlog::info("modeldeployment {}/{}: deleting Deployment {}", ns, md.metadata.name,
                 kube::object::name(child));
  }
  policy::ModelDeploymentFacts facts;
  facts.deployment = md;
  facts.roles = roleFacts(md, {});
  if (md.spec.kv_cache) {
    const internal::CacheClusterView view(*config_.bindings, *config_.pools, *config_.backends);
    KVC_ASSIGN_OR_RETURN(facts.binding, view.binding(ns, md.spec.kv_cache->pool_ref));
  }
  // The roles' Pods, terminating ones included, read live: the cache holds no Pods of theirs.
  const kube::Api pods(config_.client, kube::resources::pods(), ns);
  kube::ListParams params;
  params.label_selector = workloadSelector(md.metadata.name);
  auto listed = pods.list(params, stop);
  if (!listed.ok()) {
    return listed.error().status().withContext("listing the Pods of ModelDeployment " +
                                               kube::object::key(ns, md.metadata.name));
  }
  facts.pods_left = static_cast<std::int64_t>(listed->items.size());
  KVC_RETURN_IF_ERROR(writeStatus(object, facts, stop));
  if (policy::holdsBinding(facts)) {
    return runtime::Action::requeueAfter(config_.deleting_poll);
  }
  {
    std::lock_guard<std::mutex> guard(skew_mutex_);
    skew_reported_.erase(kube::object::key(object));
  }
  // Gone: nothing writes under the Binding's domain any more.
  if (md.spec.kv_cache) {
    KVC_RETURN_IF_ERROR(noteOnBinding(md, /*hold=*/false, stop));
  }
  spdlog::info("modeldeployment {}/{}: released (its Deployments and Pods are gone)", ns,
               md.metadata.name);
  return runtime::Action::done();
}

std::vector<policy::ModelDeploymentRoleFacts> ModelDeploymentReconciler::roleFacts(
    const api::ModelDeployment& md, const std::vector<policy::RenderedRole>& rendered) const {
  std::vector<policy::ModelDeploymentRoleFacts> out;
  for (const api::ModelDeploymentRole& role : md.spec.roles) {
    policy::ModelDeploymentRoleFacts facts;
    facts.name = role.name;
    for (const policy::RenderedRole& done : rendered) {
      if (done.name == role.name) {
        facts.rendered_hash = stringAt(
            done.deployment,
            {"spec", "template", "metadata", "annotations", policy::kPodSpecHashAnnotation.data()});
        facts.attached = done.attached;
      }
    }
    if (runtime::ObjectPtr live = config_.workloads->get(kube::object::key(
            md.metadata.namespace_name, policy::roleWorkloadName(md.metadata.name, role.name)))) {
      facts.deployment = policy::observeRoleDeployment(*live);
    }
    out.push_back(std::move(facts));
  }
  return out;
}

Status ModelDeploymentReconciler::writeStatus(const Json& object,
                                              const policy::ModelDeploymentFacts& facts,
                                              std::stop_token stop) {
  const std::string key = kube::object::key(object);
  const std::string now = kube::formatTime(config_.clock->wallNow());
  std::vector<policy::ModelDeploymentEvent> events;
  auto written = status_.update(
      *config_.deployments, key,
      [&](const Json& current) -> Result<Json> {
        KVC_ASSIGN_OR_RETURN(api::ModelDeployment fresh, api::modelDeploymentFromJson(current));
        policy::ModelDeploymentFacts now_facts = facts;
        now_facts.deployment = fresh;
        api::ModelDeployment::Status status =
            policy::modelDeploymentStatus(now_facts, fresh.metadata.generation, now);
        events = policy::modelDeploymentEvents(fresh.status, status);
        return api::modelDeploymentStatusToJson(status);
      },
      stop);
  if (!written.ok()) {
    return written.status();
  }
  if (config_.events != nullptr && written->outcome == runtime::StatusWriteOutcome::Written) {
    for (const policy::ModelDeploymentEvent& event : events) {
      config_.events->event(written->object,
                            event.type == "Warning" ? runtime::EventType::Warning
                                                    : runtime::EventType::Normal,
                            event.reason, "Render", event.message);
    }
  }
  return okStatus();
}

void ModelDeploymentReconciler::reportRuntimeSkew(
    const Json& object, const std::vector<policy::ModelDeploymentRoleFacts>& roles) {
  if (config_.replicas == nullptr) {
    return;
  }
  const std::string key = kube::object::key(object);
  std::map<std::string, std::string> current;
  for (const policy::ModelDeploymentRoleFacts& role : roles) {
    if (role.deployment && !role.deployment->pod_spec_hash.empty()) {
      current[role.name] = role.deployment->pod_spec_hash;
    }
  }
  std::vector<Json> pods;
  for (const runtime::ObjectPtr& pod : config_.replicas->byIndex(kReplicasByDeployment, key)) {
    pods.push_back(*pod);
  }
  const std::optional<policy::RuntimeSkew> skew =
      policy::runtimeVersionSkew(kube::object::name(object), pods, current);
  {
    std::lock_guard<std::mutex> guard(skew_mutex_);
    if (!skew) {
      skew_reported_.erase(key);
      return;
    }
    auto [it, inserted] = skew_reported_.try_emplace(key, skew->signature);
    if (!inserted && it->second == skew->signature) {
      return;  // said already
    }
    it->second = skew->signature;
  }
  if (config_.events != nullptr) {
    config_.events->event(object, runtime::EventType::Warning, skew->event.reason,
                          "ObserveReplica", skew->event.message);
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
        KVC_ASSIGN_OR_RETURN(std::vector<api::ObjectReference> used_by,
                             api::objectReferencesFromJson(status.value("usedBy", Json()),
                                                           "status.usedBy"));
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
