#include "kvc/policy/store/backend_plan.h"

#include <algorithm>

#include "kvc/api/backend_conditions.h"
#include "kvc/policy/quota/tenant_quota_policy.h"
#include "kvc/policy/store/store_image.h"
#include "kvc/policy/store/store_render.h"

namespace kvc::policy {
namespace {

namespace bc = api::backend;

bool needsFinalizer(const api::KVCacheBackend& backend) {
  return !backend.metadata.deleting && !api::hasFinalizer(backend.metadata, bc::kFinalizer);
}

// Why no image resolves for the store (spec.image and the Setting both empty), if none does.
std::optional<std::string> imageError(const ManagedBackendObservation& seen) {
  if (auto image = storeImage(seen.backend, std::nullopt, seen.inputs); !image.ok()) {
    return image.status().message();
  }
  return std::nullopt;
}

std::string templateHash(const Json& daemon_set) {
  return daemon_set.value(Json::json_pointer("/spec/template/metadata/annotations/" +
                                             std::string("kvcache.gpustack.ai~1pod-spec-hash")),
                          std::string());
}

// 2a: the RoleBindings of ours the render names with another roleRef than they have.
Status planRoleBindings(const ManagedBackendObservation& seen,
                        const std::vector<RenderedObject>& rendered, ManagedBackendPlan& plan) {
  for (const RenderedObject& child : rendered) {
    if (child.object.value("kind", std::string()) != "RoleBinding") {
      continue;
    }
    if (seen.role_bindings_error) {
      return *seen.role_bindings_error;
    }
    auto it = seen.role_bindings.find(stringAt(child.object, {"metadata", "name"}));
    if (it == seen.role_bindings.end()) {
      continue;
    }
    const LiveRoleBinding& live = it->second;
    if (!live.ours || live.role_ref == child.object.value("roleRef", Json())) {
      continue;  // not ours (the apply refuses it), or unchanged
    }
    plan.replace_role_bindings.push_back({it->first, live.uid});
  }
  return okStatus();
}

// 2c: the member Pods that run another template than their group's (the DaemonSets are
// OnDelete), unless they are going already.
void planStaleMembers(const ManagedBackendObservation& seen,
                      const std::vector<RenderedObject>& rendered, ManagedBackendPlan& plan) {
  for (const RenderedObject& child : rendered) {
    if (child.object.value("kind", std::string()) != "DaemonSet" || !child.group) {
      continue;
    }
    const std::size_t group = static_cast<std::size_t>(*child.group);
    if (group >= seen.store.groups.size()) {
      continue;
    }
    const std::string want = templateHash(child.object);
    for (const MemberPodObservation& member : seen.store.groups[group].pods) {
      const Json& pod = member.pod;
      const Json annotations =
          pod.value(Json::json_pointer("/metadata/annotations"), Json::object());
      const std::string have =
          annotations.value(std::string(kPodSpecHashAnnotation), std::string());
      if (have == want || !stringAt(pod, {"metadata", "deletionTimestamp"}).empty()) {
        continue;
      }
      plan.stale_members.push_back(
          {stringAt(pod, {"metadata", "name"}), stringAt(pod, {"metadata", "uid"}), have});
    }
  }
}

// 2: the converge of a backend whose image resolves. Not ok when nothing can be written: the
// render failed, or a RoleBinding it names could not be read.
Status planConverge(const ManagedBackendObservation& seen, ManagedBackendPlan& plan) {
  auto rendered = renderStore(seen.backend, seen.inputs, seen.store.leader_deployment);
  if (!rendered.ok()) {
    return rendered.status();
  }
  KVC_RETURN_IF_ERROR(planRoleBindings(seen, *rendered, plan));
  planStaleMembers(seen, *rendered, plan);
  plan.apply = std::move(rendered).value();
  if (seen.backend.spec.multi_tenancy) {
    KVC_ASSIGN_OR_RETURN(Json seed, tenantQuotaPolicyConfigMap(seen.backend.metadata.name,
                                                               seen.inputs.namespace_name, {}));
    plan.tenant_policy_seed = RenderedObject{std::move(seed), "tenant-quota-policy", std::nullopt};
  }
  return okStatus();
}

// 4: the Lease's holder against the baseline the last pass left.
void planHandover(const ManagedBackendObservation& seen, ManagedBackendPlan& plan) {
  const LeaseObservation& lease = seen.store.lease;
  if (lease.state == LeaseObservation::State::Absent) {
    plan.forget_handover = true;  // a Lease that disappears is forgotten
    return;
  }
  if (lease.state != LeaseObservation::State::Read) {
    return;
  }
  HandoverBaseline baseline = seen.handover.value_or(HandoverBaseline{});
  plan.handover = leaderHandover(baseline, lease.holder, lease.transitions);
  plan.handover_baseline = std::move(baseline);
}

}  // namespace

BackendFacts backendConsumers(const api::KVCacheBackend& backend,
                              const std::set<std::string>& gone) {
  BackendFacts facts;
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

bool tearingDown(const api::KVCacheBackend& backend, const std::set<std::string>& gone) {
  return backend.metadata.deleting && backendConsumers(backend, gone).consumers.empty();
}

// ---- external --------------------------------------------------------------------------------

ExternalBackendPlan planExternalBackend(const ExternalBackendObservation& seen) {
  ExternalBackendPlan plan;
  const api::KVCacheBackend& backend = seen.backend;
  if (!seen.written_consumers) {
    // 1 and 2; the rest is planned from the pools the written status names.
    plan.add_finalizer = needsFinalizer(backend);
    plan.status = externalStatusFor(seen, backend);
    return plan;
  }
  // 3.
  plan.release = backend.metadata.deleting && seen.written_consumers->empty() &&
                 api::hasFinalizer(backend.metadata, bc::kFinalizer);
  plan.next = plan.release ? BackendNext::Done : BackendNext::Resync;
  return plan;
}

BackendStatusPlan externalStatusFor(const ExternalBackendObservation& seen,
                                    const api::KVCacheBackend& current) {
  BackendStatusPlan out{backendConsumers(current, seen.gone), {}};
  out.status =
      externalBackendStatus(out.facts, seen.reading, current.metadata.generation, seen.now);
  return out;
}

// ---- managed ---------------------------------------------------------------------------------

ManagedBackendPlan planManagedBackend(const ManagedBackendObservation& seen) {
  ManagedBackendPlan plan;
  Status failure = okStatus();
  if (!seen.converged) {
    plan.add_finalizer = needsFinalizer(seen.backend);
    if (!imageError(seen)) {
      failure = planConverge(seen, plan);
      if (plan.converges()) {
        return plan;  // 2: the rest is planned from what the converge did
      }
    }
  } else {
    failure = seen.converged->outcome;
  }
  if (!failure.ok()) {
    // 3. Nothing after the failure was written; the status still reports what runs, and the
    // failure is retried with backoff.
    plan.render_failed = failure.message();
    plan.failure = failure;
  }
  planHandover(seen, plan);
  plan.status = managedStatusFor(seen, seen.backend);
  plan.next = BackendNext::Resync;
  return plan;
}

ManagedStatusPlan managedStatusFor(const ManagedBackendObservation& seen,
                                   const api::KVCacheBackend& current) {
  ManagedStatusPlan out;
  ManagedBackendFacts facts = seen.store;
  // usedBy as the pool controller last wrote it, minus the pools definitely gone.
  facts.backend = backendConsumers(current, seen.gone);
  facts.image_error = imageError(seen);
  facts.settings_image = seen.inputs.settings_image;
  if (auto image = storeImage(seen.backend, std::nullopt, seen.inputs);
      image.ok() && !projectStoreImage(*image, seen.inputs.settings_image)) {
    facts.published_leader_image = *image;
  }
  out.status = managedBackendStatus(facts, seen.reading, current.metadata.generation, seen.now);
  out.tier_not_empty = tierNotEmptyEvent(current.status, out.status);
  return out;
}

bool managedMasterReadable(const api::KVCacheBackend& backend, const StoreInputs& inputs,
                           const Json& leader_deployment) {
  return storeImage(backend, std::nullopt, inputs).ok() || leader_deployment.is_object();
}

}  // namespace kvc::policy
