#pragma once
// The ModelDeployment reconciler (contract §8). Its finalizer (worker.gpustack.ai/model-deployment)
// goes through runtime::reconcileWithFinalizer: the deployment holds its Binding (status.usedBy)
// until its engine Pods are gone, so it is released only after that. Each pass is observe →
// plan → act (STYLE.md §15): the controller reads what the pass needs into a
// policy::ModelDeploymentObservation, policy::planModelDeployment / planModelDeploymentTeardown
// (policy/model_deployment/model_deployment_plan.h) decide every write, status, Event and the
// requeue, and the pass carries the plan out in this order, stopping at the first write that
// fails. One pass over a live deployment:
//
//   observe  spec.kvCache.poolRef resolved through the informer caches with
//            policy::resolveBinding — the function Pod injection calls — into the Binding, pool,
//            backend, master and domain, or the reason it does not resolve (then no connector
//            is rendered at all); the role Deployments, the endpoint Service and the engine Pods
//            as cached.
//   act      the apply stage, then the report stage planned from the caches as the apply left
//            them:
//            1. the role Deployments (policy::renderModelDeployment: one `<md>-<role>` per role,
//               the client configuration from the same renderer as the Pod webhook) — and, when
//               every role is a Server, the Service `<md>` that fronts them
//               (policy/model_deployment_endpoint.h) — applied server-side as children of the
//               deployment (runtime::OwnedApplier: owner reference and note, never adopting an
//               object that is not ours; children of this deployment that were not rendered are
//               pruned). A render that fails applies nothing (what runs keeps running). What the
//               apply did is recorded and the pass planned again: a same-named object that is
//               not ours is reported as the render failure (RenderFailed in the status and as an
//               Event);
//            2. the deployment written into its Binding's status.usedBy (the Binding's deletion
//               is held, HeldByWorkloads, while it is there); the pool controller keeps that part
//               of the status;
//            3. status: kvCache, roles[], endpoint (`<md>.<ns>.svc:8000` while the Service
//               exists), the conditions and the phase (the policy's decision from what the
//               Binding reports and what each role's Deployment reports), and the Events
//               (RenderFailed) when the write changed it;
//            4. RuntimeVersionSkew, once per distinct set of engine builds; ReplicaEvicted,
//               ReplicaLeaving and ReplicaRestarted come from each engine Pod's updates
//               (recordReplicaTransition, the Pod informer's handler);
//            5. requeueAfter(resync).
// Deleting: the role Deployments are deleted in the foreground (their Pods go first), the status
// says Deleting, and once they and their Pods (listed live) are gone the deployment leaves the
// Binding's usedBy and releases its finalizer; until then requeueAfter(deleting_poll).

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "kvc/api/model_deployment.h"
#include "kvc/api/settings.h"
#include "kvc/common/clock.h"
#include "kvc/controllers/setup.h"
#include "kvc/kube/client.h"
#include "kvc/policy/model_deployment/model_deployment_plan.h"
#include "kvc/runtime/controller.h"
#include "kvc/runtime/events.h"
#include "kvc/runtime/informer.h"
#include "kvc/runtime/manager.h"
#include "kvc/runtime/metrics.h"
#include "kvc/runtime/owned.h"
#include "kvc/runtime/status_writer.h"
#include "kvc/runtime/store.h"

namespace kvc::controllers {

inline constexpr std::string_view kModelDeploymentControllerName = "modeldeployment";

// ModelDeployment -> "<namespace>/<spec.kvCache.poolRef.name>" (its Binding's cache key).
inline constexpr const char* kModelDeploymentsByBinding = "binding";
std::vector<std::string> modelDeploymentBinding(const Json& deployment);

// The label selector of every role workload (the informer on Deployments in all namespaces).
std::string roleWorkloadSelector();

// Engine Pod -> "<namespace>/<md>" (the cache key of the ModelDeployment it is a replica of).
inline constexpr const char* kReplicasByDeployment = "model-deployment";
std::vector<std::string> replicaDeployment(const Json& pod);
// What the informer on engine Pods keeps of each (their Events and the runtime skew read it).
runtime::Transform replicaPodProjection();
// Records the Events one engine Pod's update calls for (ReplicaEvicted, ReplicaLeaving,
// ReplicaRestarted) on its ModelDeployment, when `deployments` holds it; the caller records only
// while leading, as every controller acts.
void recordReplicaTransition(const runtime::Cache& deployments, runtime::EventRecorder& events,
                             const Json& before, const Json& after);

struct ModelDeploymentControllerConfig {
  kube::ClientPtr client;
  // Informer caches: ModelDeployments (indexed kModelDeploymentsByBinding), the role Deployments,
  // the endpoint Services and the engine Pods (roleWorkloadSelector, every watched namespace),
  // Bindings, pools, backends.
  const runtime::Cache* deployments = nullptr;
  const runtime::Cache* workloads = nullptr;
  const runtime::Cache* services = nullptr;
  const runtime::Cache* replicas = nullptr;  // engine Pods, indexed kReplicasByDeployment
  const runtime::Cache* bindings = nullptr;
  const runtime::Cache* pools = nullptr;
  const runtime::Cache* backends = nullptr;
  std::function<api::Settings()> settings;
  runtime::EventRecorder* events = nullptr;  // optional
  runtime::Registry* metrics = nullptr;      // optional
  Clock::Duration resync = std::chrono::seconds(60);
  Clock::Duration deleting_poll = std::chrono::seconds(2);
  const Clock* clock = &realClock();
};

class ModelDeploymentReconciler final : public runtime::Reconciler {
public:
  explicit ModelDeploymentReconciler(ModelDeploymentControllerConfig config);
  Result<runtime::Action> reconcile(const runtime::Request& request, std::stop_token stop) override;

  // The controller with its informers, indexes, watches and filters, added to `manager`:
  // ModelDeployments (spec and lifecycle); their role Deployments and endpoint Services (by
  // owner); their engine Pods (what RuntimeVersionSkew reads, and the replica Events recorded
  // by the leader); Bindings, pools and backends (mapped through the Binding a deployment
  // names); the Settings (every deployment: the dtype Setting).
  static Status setupWithManager(runtime::Manager& manager, const ControllerSetup& setup);

private:
  // The two passes reconcileWithFinalizer runs: a live deployment, a deleting one.
  Result<runtime::Action> converge(const Json& object, const api::ModelDeployment& md,
                                   std::stop_token stop);
  Result<runtime::Action> teardown(const Json& object, const api::ModelDeployment& md,
                                   std::stop_token stop);

  // observe: what both passes read (the Binding, the role Deployments and the Service), then
  // what a live pass reads (the resolution, the engine Pods and the skew last reported) or what
  // a deleting one reads (its workloads, the Pods of its roles, read live).
  Result<policy::ModelDeploymentObservation> observe(const api::ModelDeployment& md) const;
  void observeWorkloads(policy::ModelDeploymentObservation& seen) const;
  Status observeLive(policy::ModelDeploymentObservation& seen);
  Status observeDeleting(const Json& object, policy::ModelDeploymentObservation& seen,
                         std::stop_token stop) const;

  // act: a live pass's report stage (after the apply stage, in converge), a deleting pass.
  Result<runtime::Action> act(const Json& object, const policy::ModelDeploymentPlan& plan,
                              const policy::ModelDeploymentObservation& seen, std::stop_token stop);
  Result<runtime::Action> actTeardown(const Json& object, const policy::ModelDeploymentPlan& plan,
                                      const policy::ModelDeploymentObservation& seen,
                                      std::stop_token stop);
  // The role Deployments and the Service applied as children; a same-named object that is not
  // ours is a refusal (nothing written), any other failure an error.
  Result<policy::WorkloadApply> applyWorkloads(const Json& object,
                                               const policy::ModelDeploymentPlan& plan,
                                               std::stop_token stop);
  // Adds (hold) or removes the deployment from its Binding's status.usedBy; writes only on a
  // change, and nothing when the Binding does not exist.
  Status noteOnBinding(const api::ModelDeployment& md, bool hold, std::stop_token stop);
  // The planned status (decided again from a newer deployment with the same facts), and the
  // Events it calls for when the write changed it.
  Status writeStatus(const policy::ModelDeploymentPlan& plan,
                     const policy::ModelDeploymentObservation& seen, std::stop_token stop);
  // RuntimeVersionSkew: the signature remembered (or forgotten) and the Event recorded.
  void reportRuntimeSkew(const Json& object, const policy::ModelDeploymentPlan& plan);

  ModelDeploymentControllerConfig config_;
  runtime::StatusWriter status_;
  runtime::StatusWriter binding_status_;
  runtime::OwnedApplier owned_;
  std::mutex skew_mutex_;
  std::map<std::string, std::string> skew_reported_;  // deployment key -> RuntimeSkew::signature
};

}  // namespace kvc::controllers
