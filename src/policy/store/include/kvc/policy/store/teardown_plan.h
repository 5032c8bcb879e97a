#pragma once
// One pass of a managed KVCacheBackend's teardown (contract §2.8, §3.7; STYLE.md §15), decided.
// Pure. A backend that is being deleted and that no pool uses any more is torn down one step per
// pass, every teardown poll; the controller observes a TeardownObservation, planTeardown says
// what to write, and the controller carries it out in this order, stopping at the first write
// that fails (errors name the teardown; the next pass plans again from what is there):
//
//   a. while anything carrying this backend's ownership note, or any store Pod, is left: every
//      such object not already going is deleted in the foreground — its NetworkPolicies only
//      once nothing else is left, so no store Pod runs unguarded; a Deployment or DaemonSet
//      still there `grace + 120 s` after its deletion began, with Pods on nodes, records
//      KVCacheWorkloadNotTerminated (on the backend) naming those nodes. The status says
//      "deleting the store's workloads: …" and the pass ends.
//   b. the Lease `<b>-leader` the store wrote while electing is deleted (gone already is fine);
//   c. with cleanAfterDelete, per group and per Node the group selects: a cleanup Pod is created
//      where there is none yet (policy/tier_cleanup.h); while any runs, the status says
//      "emptying the disk tier (…)" and the pass ends. A node whose tier overlaps another
//      backend's (KVCacheTierSharedPath), a cleanup Pod that cannot be rendered or did not
//      succeed (KVCacheTierNotCleaned) and one that left entries (KVCacheTierPartlyEmptied) are
//      recorded on the Node once every cleanup Pod has ended;
//   d. the backend's finalizer is removed ("torn down and released").
//
// While the teardown goes on, the status is policy::teardownStatus with where it stands, decided
// again from a newer backend with the same `where`; the pass is requeued after the teardown poll.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/common/json.h"
#include "kvc/policy/store/backend_plan.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {

// After a workload's Pods' grace period, how long its teardown may take before it is reported.
inline constexpr std::int64_t kWorkloadOverdueSeconds = 120;

// An object of the store that carries this backend's note, and the resource it is deleted
// through ("deployments", "daemonsets", …: the plural of kube's resource table).
struct StoreChild {
  std::string resource;
  Json object;  // as cached (or listed live)
  // Whole seconds since its deletion began (measured by the observer, which owns the clock);
  // nullopt while it is not being deleted.
  std::optional<std::int64_t> deleting_for_seconds;
};

// Step c's view of one group with cleanAfterDelete.
struct TierGroupObservation {
  int group = 0;               // its position in spec.connection.managed.members
  std::vector<Json> nodes;     // the Nodes its nodeSelector selects (a live list)
  std::vector<Json> cleaners;  // its cleanup Pods (component tier-clean-<group>)
};

struct TeardownObservation {
  std::string now;              // RFC 3339
  api::KVCacheBackend backend;  // as cached
  std::set<std::string> gone;   // the pools of usedBy definitely gone (a live NotFound)
  StoreInputs inputs;           // the operator namespace, the Setting's image (cleanup Pods)
  // a. Every object carrying this backend's note, in the order they are deleted (Deployments,
  // DaemonSets, Services, RoleBindings, Roles, ServiceAccounts, ConfigMaps, NetworkPolicies,
  // "networkpolicies" held back while anything else is left); the store's own
  // Pods (the cleanup Pods excepted).
  std::vector<StoreChild> children;
  std::vector<Json> store_pods;
  // c. Read only once `children` and `store_pods` are empty: each group with cleanAfterDelete,
  // and the other backends (whose tiers may share a path on a node).
  std::vector<TierGroupObservation> tiers;
  std::vector<api::KVCacheBackend> other_backends;
};

// A cleanup Pod to create: the intent (policy::tierCleanupPod); the controller adds the owner
// reference and the ownership note {role tier-cleanup, group}.
struct CleanupPodPlan {
  int group = 0;
  Json pod;
};

// A Warning recorded on a Node (action "Clean").
struct NodeEvent {
  Json node;
  std::string reason;
  std::string message;
};

struct TeardownPlan {
  // a.
  std::vector<StoreChild> delete_in_foreground;
  std::vector<std::string> workload_not_terminated;  // KVCacheWorkloadNotTerminated messages
  // b.
  bool delete_lease = false;
  // c.
  std::vector<CleanupPodPlan> create_cleaners;
  std::vector<NodeEvent> node_events;
  // d. Released: the finalizer goes (when the backend still carries it); or where the teardown
  // stands, in the status.
  bool release = false;
  bool remove_finalizer = false;
  std::optional<std::string> where;
  std::optional<BackendStatusPlan> status;
  BackendNext next = BackendNext::TeardownPoll;
};

TeardownPlan planTeardown(const TeardownObservation& seen);

// The teardown status of `current` (the observed backend, or a newer one a write met).
BackendStatusPlan teardownStatusFor(const TeardownObservation& seen, std::string_view where,
                                    const api::KVCacheBackend& current);

// Whether step a is over: no object of the store, and no store Pod, is left (the observer then
// reads what step c needs).
bool storeWorkloadsGone(const TeardownObservation& seen);

// Whether a group's nodeSelector selects `node` (by its labels, equality terms).
bool nodeSelectedBy(const Json& node, const api::MemberGroup& group);

}  // namespace kvc::policy
