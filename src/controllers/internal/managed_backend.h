#pragma once
// The managed branch of the KVCacheBackend reconciler (connection.managed; contract §2.5–§2.8,
// §3): the store is rendered, run and observed. One pass over a backend that is not being torn
// down (a deleting backend that a pool still uses keeps converging, phase Deleting naming the
// pool; the teardown is internal/backend_teardown.h), observe → plan → act, with every decision
// in policy::planManagedBackend (policy/store/backend_plan.h):
//
//   observe  the backend as cached; the image's inputs (the operator namespace, the Setting
//            kv-cache-backend-image); the leader Deployment and Pods, each group's DaemonSet and
//            Pods, the Lease `<b>-leader` (from the informer caches; the Lease read live without
//            one); while an image resolves, the election RoleBindings the render names (cached,
//            else live); the leader handover baseline the last pass left.
//   plan, act — the converge stage:
//            1. the finalizer;
//            2. the converge, stopping at its first failure: RoleBindings of ours whose roleRef
//               changed deleted (guarded by uid), everything policy::renderStore renders applied
//               with server-side apply (owner reference, ownership note, never adopting a
//               same-named object without our note; one refusal changes nothing), RBAC and
//               DaemonSets no longer rendered pruned, member Pods whose pod-spec-hash differs
//               from their group's template deleted (the DaemonSets are OnDelete). What it did
//               is recorded in the observation, and the store's objects are looked at again.
//   observe  the master through the leader Service's admin port (/health, then /metrics and
//            /get_segments_detail while it serves) — once per pass, after the converge — while
//            an image resolves or the leader Deployment exists.
//   plan, act — the report stage:
//            3. RenderFailed (Warning, on the backend) when the render or the converge failed;
//            4. KVCacheLeaderHandover (Normal) when the Lease moved to another holder;
//            5. the status (policy::managedBackendStatus), decided again from a newer backend
//               with the same facts; KVCacheTierNotEmpty (Warning) when it newly reports a
//               non-empty tier;
//            6. the converge's failure (retried with backoff), else requeueAfter(resync).
// Without an image nothing is rendered or changed: the backend is reported Degraded, and
// whatever runs keeps running.

#include <map>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>

#include "kvc/api/backend.h"
#include "kvc/controllers/backend_controller.h"
#include "kvc/policy/store/backend_plan.h"
#include "kvc/policy/store/leader_handover.h"
#include "kvc/runtime/owned.h"

namespace kvc::controllers::internal {

class ManagedBackend {
public:
  ManagedBackend(const BackendControllerConfig& config, const runtime::StatusWriter& status);

  // `object` is the backend as cached; `gone` the pools of its usedBy that are definitely gone.
  Result<runtime::Action> reconcile(const Json& object, const api::KVCacheBackend& backend,
                                    const std::set<std::string>& gone, std::stop_token stop);

private:
  policy::ManagedBackendObservation observe(const Json& object, const api::KVCacheBackend& backend,
                                            const std::set<std::string>& gone,
                                            std::stop_token stop);
  // What the workloads and the Lease say.
  policy::ManagedBackendFacts observeStore(const api::KVCacheBackend& backend,
                                           std::stop_token stop) const;
  void observeRoleBindings(const Json& object, policy::ManagedBackendObservation& seen,
                           std::stop_token stop) const;
  void observeMaster(policy::ManagedBackendObservation& seen) const;

  // The report stage's plan carried out: the finalizer (when no converge added it), the Events,
  // the status, the outcome.
  Result<runtime::Action> act(const Json& object, const policy::ManagedBackendPlan& plan,
                              const policy::ManagedBackendObservation& seen, std::stop_token stop);
  Status addFinalizer(const Json& object, const policy::ManagedBackendPlan& plan,
                      std::stop_token stop);
  // 2, stopping at the first failure, which is returned.
  Status converge(const Json& object, const policy::ManagedBackendPlan& plan, std::stop_token stop);
  Status replaceRoleBindings(const Json& object, const policy::ManagedBackendPlan& plan,
                             std::stop_token stop);
  // The tenant-quota policy's seed, created once (its contents are the pool controller's).
  Status seedTenantPolicy(const Json& object, const policy::ManagedBackendPlan& plan,
                          std::stop_token stop);
  Status applyStore(const Json& object, const std::vector<policy::RenderedObject>& rendered,
                    std::stop_token stop);
  Status deleteStaleMembers(const Json& object, const policy::ManagedBackendPlan& plan,
                            std::stop_token stop);
  // 4.
  void noteHandover(const Json& object, const policy::ManagedBackendPlan& plan);
  // 5.
  Status writeStatus(const Json& object, const policy::ManagedBackendPlan& plan,
                     const policy::ManagedBackendObservation& seen, std::stop_token stop);

  const BackendControllerConfig& config_;
  const runtime::StatusWriter& status_;
  runtime::OwnedApplier owned_;
  std::mutex handover_mutex_;
  std::map<std::string, policy::HandoverBaseline> handovers_;
};

}  // namespace kvc::controllers::internal
