#pragma once
// The ModelDeployment reconciler (contract §8). One pass over a live deployment:
//
//   1. Its finalizer (worker.gpustack.ai/model-deployment): the deployment holds its Binding
//      (status.usedBy) until its engine Pods are gone, so it is released only after that.
//   2. spec.kvCache.poolRef resolved through the informer caches with policy::resolveBinding —
//      the function Pod injection calls — into the Binding, pool, backend, master and domain, or
//      the reason it does not resolve (then no connector is rendered at all).
//   3. policy::renderModelDeployment: one Deployment `<md>-<role>` per role, the client
//      configuration from the same renderer as the Pod webhook. A render that fails applies
//      nothing (what runs keeps running), emits RenderFailed and says why in the status.
//   4. The Deployments — and, when every role is a Server, the Service `<md>` that fronts them
//      (policy/model_deployment_endpoint.h) — applied server-side as children of the deployment
//      (runtime::OwnedApplier: owner reference and note, never adopting an object that is not
//      ours; children of this deployment that were not rendered are pruned).
//   5. The deployment written into its Binding's status.usedBy (the Binding's deletion is held,
//      HeldByWorkloads, while it is there); the pool controller keeps that part of the status.
//   6. status: kvCache, roles[], endpoint (`<md>.<ns>.svc:8000` while the Service exists), the
//      conditions and the phase (the policy's decision from what the Binding reports and what
//      each role's Deployment reports).
//   7. The replica Events (policy/model_deployment_replicas.h): RuntimeVersionSkew here, once per
//      distinct set of engine builds; ReplicaEvicted, ReplicaLeaving and ReplicaRestarted from
//      each engine Pod's updates (recordReplicaTransition, the Pod informer's handler).
// Deleting: the role Deployments are deleted in the foreground (their Pods go first), the status
// says Deleting, and once they are gone the deployment leaves the Binding's usedBy and releases
// its finalizer.

#include <functional>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>

#include "kvc/api/model_deployment.h"
#include "kvc/api/settings.h"
#include "kvc/common/clock.h"
#include "kvc/controllers/setup.h"
#include "kvc/kube/client.h"
#include "kvc/policy/model_deployment/model_deployment_render.h"
#include "kvc/policy/model_deployment/model_deployment_status.h"
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
  Result<runtime::Action> reconcile(const runtime::Request& request,
                                    std::stop_token stop) override;

  // The controller with its informers, indexes, watches and filters, added to `manager`:
  // ModelDeployments (spec and lifecycle); their role Deployments and endpoint Services (by
  // owner); their engine Pods (what RuntimeVersionSkew reads, and the replica Events recorded
  // by the leader); Bindings, pools and backends (mapped through the Binding a deployment
  // names); the Settings (every deployment: the dtype Setting).
  static Status setupWithManager(runtime::Manager& manager, const ControllerSetup& setup);

private:
  Result<runtime::Action> converge(const Json& object, const api::ModelDeployment& md,
                                   std::stop_token stop);
  Result<runtime::Action> teardown(const Json& object, const api::ModelDeployment& md,
                                   std::stop_token stop);
  // Adds (hold) or removes the deployment from its Binding's status.usedBy; writes only on a
  // change, and nothing when the Binding does not exist.
  Status noteOnBinding(const api::ModelDeployment& md, bool hold, std::stop_token stop);
  // Per spec role: this pass's render (hash, connector) and its live Deployment.
  std::vector<policy::ModelDeploymentRoleFacts> roleFacts(
      const api::ModelDeployment& md, const std::vector<policy::RenderedRole>& rendered) const;
  // policy::modelDeploymentStatus from the fresh object, and the Events it calls for.
  Status writeStatus(const Json& object, const policy::ModelDeploymentFacts& facts,
                     std::stop_token stop);
  // RuntimeVersionSkew among the running replicas of the current templates, recorded when the
  // set of builds differs from the one last recorded for this deployment.
  void reportRuntimeSkew(const Json& object,
                         const std::vector<policy::ModelDeploymentRoleFacts>& roles);

  ModelDeploymentControllerConfig config_;
  runtime::StatusWriter status_;
  runtime::StatusWriter binding_status_;
  runtime::OwnedApplier owned_;
  std::mutex skew_mutex_;
  std::map<std::string, std::string> skew_reported_;  // deployment key -> RuntimeSkew::signature
};

}  // namespace kvc::controllers
