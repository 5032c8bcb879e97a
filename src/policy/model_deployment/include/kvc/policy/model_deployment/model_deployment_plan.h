#pragma once
// One ModelDeployment pass, decided (contract §8; STYLE.md §15 "observe → plan → act"). Pure.
// The controller observes what the pass reads into a ModelDeploymentObservation — the
// deployment as cached, what spec.kvCache resolves to (policy::resolveBinding over the caches),
// its role Deployments, endpoint Service and engine Pods as cached, and while deleting the
// Pods of its roles still present — and carries the plan out in this order, stopping at the
// first write that fails (the next pass plans again from what is there). The finalizer around
// both passes is runtime::reconcileWithFinalizer's.
//
// A live deployment (planModelDeployment):
//   1. the role Deployments (and, when every role is a Server, the Service `<md>`) rendered and
//      applied as its children; nothing when the render fails (what runs keeps running). A plan
//      that applies ends here: the controller records what the apply did
//      (ModelDeploymentObservation::applied) and plans again. A same-named object that is not
//      ours refuses the apply (nothing written): the second plan reports it as the render
//      failure (RenderFailed), with no role rendered.
//   2. the deployment in its Binding's status.usedBy (it holds the Binding while it exists)
//   3. the status (policy::modelDeploymentStatus) — decided again from a newer deployment with
//      the same facts — and, when the write changed it, the Events policy::modelDeploymentEvents
//      calls for (RenderFailed)
//   4. RuntimeVersionSkew, once per distinct set of engine builds
//   5. requeueAfter(resync)
//
// A deleting deployment (planModelDeploymentTeardown):
//   1. its role Deployments carrying its note, not going yet, deleted in the foreground
//   2. the status (phase Deleting) and its Events, as above
//   3. while it still holds its Binding (policy::holdsBinding: Deployments or Pods of its roles
//      are left): requeueAfter(deleting poll). Otherwise the skew it reported is forgotten, it
//      leaves its Binding's usedBy and the pass is done (the finalizer goes).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvc/api/binding.h"
#include "kvc/api/model_deployment.h"
#include "kvc/api/settings.h"
#include "kvc/common/json.h"
#include "kvc/policy/inject/refusal.h"
#include "kvc/policy/inject/resolve.h"
#include "kvc/policy/model_deployment/model_deployment_render.h"
#include "kvc/policy/model_deployment/model_deployment_status.h"

namespace kvc::policy {

// When the deployment is passed again.
enum class ModelDeploymentNext {
  Done,          // released (its finalizer goes)
  Resync,        // requeueAfter(resync)
  DeletingPoll,  // requeueAfter(deleting poll): its workloads are still going
};

// What the apply of the role workloads did: applied, or refused because a same-named object is
// not ours (never adopted: the user renames or removes it), with the refusal's message.
struct WorkloadApply {
  std::optional<std::string> refused;
};

struct ModelDeploymentObservation {
  std::string now;                  // RFC 3339
  api::ModelDeployment deployment;  // as cached
  api::Settings settings;
  // With spec.kvCache: the Binding it names (nullopt: not found), and — with the Binding found
  // and an engine — what resolveBinding answered: a Resolution or a Refusal.
  std::optional<api::KVCachePoolBinding> binding;
  std::optional<Resolution> resolution;
  std::optional<Refusal> refusal;
  // The live Deployment `<md>-<role>` of each spec role that has one (by role name).
  std::map<std::string, Json> role_deployments;
  bool service_exists = false;  // the Service `<md>` is cached
  // The engine Pods of the deployment (nullopt: not watched, so no skew is judged), and the
  // signature of the skew last reported for it (nullopt: none).
  std::optional<std::vector<Json>> replicas;
  std::optional<std::string> skew_reported;
  // Set once the apply was carried out.
  std::optional<WorkloadApply> applied;
  // Deleting: its role Deployments carrying its note, and the Pods of its roles still present
  // (terminating ones included; a live list).
  std::vector<Json> owned_workloads;
  std::int64_t pods_left = 0;
};

struct ModelDeploymentStatusPlan {
  ModelDeploymentFacts facts;
  api::ModelDeployment::Status status;
  std::vector<ModelDeploymentEvent> events;  // recorded when the write changed the status
};

struct ModelDeploymentPlan {
  // Live, 1. A plan with `apply` ends after it: the controller records WorkloadApply and plans
  // again.
  std::optional<std::vector<RenderedRole>> apply;
  std::optional<Json> service;
  // Deleting, 1.
  std::vector<Json> delete_in_foreground;
  // The deployment held in (true) or dropped from (false) its Binding's usedBy; nullopt: neither
  // (no spec.kvCache, or a teardown still under way).
  std::optional<bool> hold_binding;
  std::optional<ModelDeploymentStatusPlan> status;
  // RuntimeVersionSkew: the Event and the signature to remember; or forget the last one.
  std::optional<ModelDeploymentEvent> skew_event;
  std::optional<std::string> skew_signature;
  bool forget_skew = false;
  ModelDeploymentNext next = ModelDeploymentNext::Resync;

  bool applies() const { return apply.has_value(); }
};

ModelDeploymentPlan planModelDeployment(const ModelDeploymentObservation& seen);
ModelDeploymentPlan planModelDeploymentTeardown(const ModelDeploymentObservation& seen);

// The status of `current` (the observed deployment, or a newer one a write met) from `facts`,
// and the Events the change from its last status calls for.
ModelDeploymentStatusPlan modelDeploymentStatusFor(const ModelDeploymentFacts& facts,
                                                   const api::ModelDeployment& current,
                                                   const std::string& now);

// The runtime the deployment's roles run: its manufacturer and engine (what the observer
// resolves spec.kvCache against), or why none is found.
struct DeploymentRuntime {
  std::string manufacturer;
  Engine engine;
};
Result<DeploymentRuntime> modelDeploymentRuntime(const api::ModelDeployment& deployment);

}  // namespace kvc::policy
