#pragma once
// The managed branch of the KVCacheBackend reconciler (connection.managed; contract §2.5–§2.8,
// §3): the store is rendered, run and observed. One pass, for a backend that is not being torn
// down:
//
//   1. The image is resolved (group > spec.image > the Setting kv-cache-backend-image, read live
//      from gpustack-settings). Without one nothing is rendered or changed: the backend is
//      reported Degraded, and whatever runs keeps running.
//   2. Everything policy::renderStore renders is applied with server-side apply (owner
//      reference, ownership note, never adopting a same-named object without our note; one
//      refusal changes nothing); RBAC and DaemonSets no longer rendered are pruned. A
//      RoleBinding of ours whose roleRef changed is deleted first (roleRef is immutable).
//   3. Member Pods whose kvcache.gpustack.ai/pod-spec-hash differs from their group's template
//      are deleted (the DaemonSets are OnDelete).
//   4. Observed: the master through the leader Service's admin port (/health, then /metrics and
//      /get_segments_detail while it serves), the leader Deployment and Pods, each group's
//      DaemonSet and Pods, the Lease `<b>-leader` (a new holder records KVCacheLeaderHandover).
//   5. The status (policy::managedBackendStatus) is written; a newly found non-empty tier
//      records KVCacheTierNotEmpty.
// The pass ends with requeueAfter(resync).
//
// A deleting backend that a pool still uses keeps converging (phase Deleting, naming the pool).
// Once none does, the teardown (contract §2.8), one step per pass, every `teardown_poll`:
//   a. every object carrying this backend's ownership note is deleted in the foreground;
//      a workload still there after its Pods' grace + 2 min records
//      KVCacheWorkloadNotTerminated naming the nodes its Pods are on;
//   b. the Lease `<b>-leader` the store wrote is deleted;
//   c. with cleanAfterDelete, one cleanup Pod per selected node empties the tier
//      (policy/tier_cleanup.h), and what did not go as planned is recorded on the Node;
//   d. the finalizer is removed.

#include <map>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>

#include "kvc/api/backend.h"
#include "kvc/controllers/backend_controller.h"
#include "kvc/policy/store/leader_handover.h"
#include "kvc/policy/store/managed_backend_status.h"
#include "kvc/policy/store/store_workload.h"
#include "kvc/runtime/owned.h"

namespace kvc::controllers::internal {

// The backend's consumers: the pools of status.usedBy, without those definitely gone
// (`dropped_stale` then), sorted and unique.
policy::BackendFacts backendConsumers(const api::KVCacheBackend& backend,
                                      const std::set<std::string>& gone);

class ManagedBackend {
public:
  ManagedBackend(const BackendControllerConfig& config, const runtime::StatusWriter& status);

  // `object` is the backend as cached; `gone` the pools of its usedBy that are definitely gone.
  Result<runtime::Action> reconcile(const Json& object, const api::KVCacheBackend& backend,
                                    const std::set<std::string>& gone, std::stop_token stop);

private:
  // Steps 1–3. Returns why no image resolves, if none does.
  Result<std::optional<std::string>> converge(const Json& object,
                                              const api::KVCacheBackend& backend,
                                              std::stop_token stop);
  Status replaceChangedRoleBindings(const Json& object,
                                    const std::vector<policy::RenderedObject>& rendered,
                                    std::stop_token stop);
  Status deleteStaleMembers(const api::KVCacheBackend& backend,
                            const std::vector<policy::RenderedObject>& rendered,
                            std::stop_token stop);
  // Step 4: what the workloads and the Lease say (the master is read separately).
  policy::ManagedBackendFacts observe(const api::KVCacheBackend& backend,
                                      std::optional<std::string> image_error,
                                      std::stop_token stop) const;
  void noteHandover(const Json& object, const policy::LeaseObservation& lease);
  Result<runtime::Action> writeStatus(const Json& object, const std::set<std::string>& gone,
                                      policy::ManagedBackendFacts observed,
                                      const policy::BackendReading& reading,
                                      std::stop_token stop);

  // The teardown; `done` is set when the finalizer may go.
  Result<std::string> teardown(const Json& object, const api::KVCacheBackend& backend,
                               bool& done, std::stop_token stop);
  Result<std::string> cleanTiers(const Json& object, const api::KVCacheBackend& backend,
                                 bool& done, std::stop_token stop);

  // The store's Pods of this backend with this component label value.
  std::vector<Json> storePods(const std::string& backend, const std::string& component) const;

  const BackendControllerConfig& config_;
  const runtime::StatusWriter& status_;
  runtime::OwnedApplier owned_;
  std::mutex handover_mutex_;
  std::map<std::string, policy::HandoverBaseline> handovers_;
};

}  // namespace kvc::controllers::internal
