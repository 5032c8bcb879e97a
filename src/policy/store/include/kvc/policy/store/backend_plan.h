#pragma once
// One KVCacheBackend pass, decided (contract §2.5–§2.8, §3; STYLE.md §15 "observe → plan →
// act"). Pure: the controller observes everything the pass reads into an observation, the plan
// says every write, status, Event and the requeue, and the controller carries it out in the
// order below, stopping at the first write that fails (the next pass plans again from what is
// there). A teardown (a deleting backend that no pool uses) is planned in teardown_plan.h.
//
// External backend (connection.external): the store is observed, never run.
//   1. the finalizer on the live backend
//   2. the status (policy::externalBackendStatus): the master as read through the spec's Admin
//      endpoint, usedBy without the pools definitely gone, Deletable from what is left. A status
//      write that meets a newer backend is decided again from it with the same reading; the
//      pools it names are recorded (ExternalBackendObservation::written_consumers) and
//   3. the pass is planned again: a deleting backend that the written status names no pool of
//      loses its finalizer (done); otherwise requeueAfter(resync).
//
// Managed backend (connection.managed), not being torn down:
//   1. the finalizer on the live backend
//   2. the converge — nothing when no image resolves (the status says Degraded, whatever runs
//      keeps running) or the render fails (RenderFailed):
//        a. RoleBindings of ours whose roleRef changed, deleted (roleRef is immutable)
//        b. everything policy::renderStore renders, applied (server-side, never adopting; one
//           refusal changes nothing; RBAC and DaemonSets no longer rendered are pruned)
//        c. member Pods whose pod-spec-hash is not their group's template's, deleted (OnDelete)
//      A plan with a converge ends there: the controller carries it out, stopping at the first
//      failure, records what it did (ManagedBackendObservation::converged) and plans again; the
//      second plan writes neither 1 nor 2.
//   3. the Event RenderFailed when the converge failed (its message is the failure's)
//   4. the Event KVCacheLeaderHandover when the Lease `<b>-leader` moved to another holder
//   5. the status (policy::managedBackendStatus), decided again from a newer backend with the
//      same facts; then the Event KVCacheTierNotEmpty when it newly reports PreexistingContent
//   6. the outcome: the converge's failure (after the status said what runs), else
//      requeueAfter(resync).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/policy/store/backend_status.h"
#include "kvc/policy/store/leader_handover.h"
#include "kvc/policy/store/managed_backend_status.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {

// The Warning a managed backend records when its converge fails (reason, on the backend).
inline constexpr std::string_view kEventRenderFailed = "RenderFailed";

// When the backend is passed again.
enum class BackendNext {
  Done,          // not before something changes (released)
  Resync,        // requeueAfter(resync)
  TeardownPoll,  // requeueAfter(teardown poll): a teardown in progress
};

// The backend's consumers: the pools of status.usedBy, without those definitely gone
// (`dropped_stale` then), sorted and unique.
BackendFacts backendConsumers(const api::KVCacheBackend& backend,
                              const std::set<std::string>& gone);

// Whether the pass is a teardown: the backend is being deleted and no pool uses it.
bool tearingDown(const api::KVCacheBackend& backend, const std::set<std::string>& gone);

// A backend status to write, with what it was decided from.
struct BackendStatusPlan {
  BackendFacts facts;
  api::KVCacheBackend::Status status;
};

// ---- external --------------------------------------------------------------------------------

struct ExternalBackendObservation {
  std::string now;              // RFC 3339
  api::KVCacheBackend backend;  // as cached
  std::set<std::string> gone;   // the pools of usedBy definitely gone (a live NotFound)
  BackendReading reading;       // the master, through the spec's Admin endpoint
  // Set once the status was written: the pools it names (none when the backend went meanwhile).
  std::optional<std::vector<std::string>> written_consumers;
};

struct ExternalBackendPlan {
  bool add_finalizer = false;
  std::optional<BackendStatusPlan> status;
  bool release = false;  // the finalizer goes
  BackendNext next = BackendNext::Resync;
};

ExternalBackendPlan planExternalBackend(const ExternalBackendObservation& seen);

// The status of the external backend `current` (the observed one, or a newer one a write met).
BackendStatusPlan externalStatusFor(const ExternalBackendObservation& seen,
                                    const api::KVCacheBackend& current);

// ---- managed ---------------------------------------------------------------------------------

// A RoleBinding the render names, as it is now (cached, else live).
struct LiveRoleBinding {
  std::string uid;
  Json role_ref;
  bool ours = false;  // it carries this backend's ownership note
};

// What the converge writes did: ok, or the first failure (nothing after it was written).
struct StoreConverge {
  Status outcome;
};

struct ManagedBackendObservation {
  std::string now;              // RFC 3339
  api::KVCacheBackend backend;  // as cached
  std::set<std::string> gone;   // the pools of usedBy definitely gone (a live NotFound)
  StoreInputs inputs;           // the operator namespace, the Setting's image
  // What the workloads and the Lease say (ManagedBackendFacts without `backend` and
  // `image_error`, which the plan decides); the leader Deployment there is also the one the
  // render reads for the two-step rise.
  ManagedBackendFacts store;
  // The RoleBindings the render names (by name; absent: not found), or why one could not be read.
  std::map<std::string, LiveRoleBinding> role_bindings;
  std::optional<Status> role_bindings_error;
  // The master through the leader Service's admin port; read while an image resolves or the
  // leader Deployment exists (otherwise unread: nothing could answer).
  BackendReading reading;
  // The leader handover baseline, as the last pass left it (nullopt: none).
  std::optional<HandoverBaseline> handover;
  // Set once the converge was carried out.
  std::optional<StoreConverge> converged;
};

struct RoleBindingReplacement {
  std::string name;
  std::string uid;  // the delete is guarded by it
};

struct StaleMember {
  std::string name;
  std::string uid;   // the delete is guarded by it
  std::string hash;  // the template it runs ("" when it carries none)
};

struct ManagedStatusPlan {
  api::KVCacheBackend::Status status;
  std::optional<std::string> tier_not_empty;  // KVCacheTierNotEmpty's message
};

struct ManagedBackendPlan {
  // 1.
  bool add_finalizer = false;
  // 2. A plan with `apply` ends after them: the controller records StoreConverge and plans again.
  std::vector<RoleBindingReplacement> replace_role_bindings;
  std::optional<std::vector<RenderedObject>> apply;
  std::vector<StaleMember> stale_members;
  // The tenant-quota policy's seed (multi-tenancy): `version: 1` with no tenants, created when
  // absent and never updated, so that a master starting before any pool uses the backend reads a
  // ConfigMap that exists. Its contents are the pool controller's from then on.
  std::optional<RenderedObject> tenant_policy_seed;
  // 3.
  std::optional<std::string> render_failed;
  // 4. The baseline to keep (nullopt: leave it as it is), or forget it (the Lease is gone).
  std::optional<HandoverBaseline> handover_baseline;
  bool forget_handover = false;
  std::optional<std::string> handover;  // KVCacheLeaderHandover's message
  // 5.
  std::optional<ManagedStatusPlan> status;
  // 6.
  std::optional<Status> failure;
  BackendNext next = BackendNext::Resync;

  bool converges() const { return apply.has_value(); }
};

ManagedBackendPlan planManagedBackend(const ManagedBackendObservation& seen);

// The facts and status of the managed backend `current` (the observed one, or a newer one a
// write met), and the tier Event the change from its last status calls for.
ManagedStatusPlan managedStatusFor(const ManagedBackendObservation& seen,
                                   const api::KVCacheBackend& current);

// Whether the master is worth reading: an image resolves (so the store is rendered) or the
// leader Deployment exists (what runs keeps running).
bool managedMasterReadable(const api::KVCacheBackend& backend, const StoreInputs& inputs,
                           const Json& leader_deployment);

}  // namespace kvc::policy
