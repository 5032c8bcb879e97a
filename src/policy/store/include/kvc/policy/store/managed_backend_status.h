#pragma once
// A managed KVCacheBackend's status (contract §2.5–§2.7): what its master answered (shared with
// external backends: capacity, PoolWrites, the segment listing) joined with what its rendered
// workloads say — the leader Deployment and its Pods, one DaemonSet and its Pods per member
// group, the Lease `<b>-leader`, and the disk tier's survey readings. Pure: observations in,
// the whole status out; the controller gathers the observations and writes the result.
//
//   LeaderAvailable   Serving / ServicePlaneNotActive from /health; when /health cannot be
//                     read: LeaderUnreachable if the Deployment has a ready replica (the
//                     Service or the master is at fault), else the first leader Pod's fault
//                     (LeaderUnschedulable, LeaderCrashLooping, the waiting reason), else
//                     LeaderStarting.
//   MembersMounted    first match wins: PodsUnreadable; a member Pod's fault when no ready
//                     member is short of a segment (Unschedulable, MemberInitCrashLooping,
//                     MemberCrashLooping, the waiting reason, FailedMount: a Pod Pending on a
//                     volume its FailedMount Event names) — it wins over NoSegments, as the
//                     seed's Troubleshooting reads ("NoSegments, or MemberCrashLooping if the
//                     container exits"); the listing's own problems; NoSegments;
//                     AmbiguousMemberIdentity; SegmentsShort (ready member Pods with no
//                     segment, named); Mounted. While the master does not serve, only a Pod
//                     fault replaces the last verdict.
//   ElectionObserved  electionBackend Kubernetes only: Electing (a holder), LeaseUnreadable,
//                     LeaderStarting (no ready leader), NoHolder (a ready leader, no holder).
//   RolloutComplete   while the Deployment exists: UpdateNotObserved, ReplicasPending (the
//                     two-step rise), Complete, Progressing.
//   TierWasEmpty      with a disk tier; decided once (a present condition is kept as it is):
//                     every wanted node's survey read 0 → Empty; some read more →
//                     PreexistingContent naming `node: count`.
//   CapacityObserved, PoolWrites, Deletable as for an external backend.
//   Phase (§2.7): Deleting; no image and nothing rendered → Degraded; LeaderAvailable False →
//   Error (Provisioning for LeaderStarting, ServicePlaneNotActive); no image but running →
//   Degraded; MembersMounted False → Degraded; LeaderAvailable True → Ready; else Provisioning.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/common/json.h"
#include "kvc/policy/store/backend_status.h"

namespace kvc::policy {

// The Lease `<b>-leader` as the controller found it.
struct LeaseObservation {
  enum class State { Absent, Read, Unreadable };
  State state = State::Absent;
  std::string holder;  // "" when nobody holds it
  std::int64_t transitions = 0;
  std::string error;  // Unreadable: why
};

// How long after its backend a member Pod's tier survey still tells what the directory held
// before this backend wrote to it (contract §2.6).
inline constexpr std::int64_t kTierSurveyWindowSeconds = 30 * 60;

struct MemberPodObservation {
  Json pod;
  // Created within kTierSurveyWindowSeconds of the backend: only those Pods' surveys say what the
  // directory held before this backend wrote to it.
  bool in_survey_window = false;
  // The kubelet's latest FailedMount Event about this Pod ("" when none): a Pod waiting on a
  // mount shows nothing else (its containers wait in ContainerCreating).
  std::string mount_failure;
};

struct MemberGroupObservation {
  Json daemon_set;  // null when absent
  std::vector<MemberPodObservation> pods;
};

struct ManagedBackendFacts {
  BackendFacts backend;        // spec, metadata, the status as last written; live consumers
  std::string namespace_name;  // where the store runs: the operator's namespace
  // Why no image resolves (spec.image and the Setting both empty); nullopt when one does.
  std::optional<std::string> image_error;
  // The leader's image when it is not this project's build (store_image.h: no election runs),
  // and the Setting kv-cache-backend-image it was told apart from; nullopt for our build.
  std::optional<std::string> published_leader_image;
  std::string settings_image;
  Json leader_deployment;  // null when absent
  std::vector<Json> leader_pods;
  bool pods_listed = true;  // false: the member Pods could not be read (PodsUnreadable)
  std::string pods_error;
  std::vector<MemberGroupObservation> groups;  // by spec.connection.managed.members position
  LeaseObservation lease;
};

// The two endpoints of a managed backend: Client `<b>-leader.<ns>.svc:50051` and Admin
// `<b>-leader.<ns>.svc:9003`.
std::vector<api::Endpoint> managedEndpoints(std::string_view backend,
                                            std::string_view namespace_name);

api::KVCacheBackend::Status managedBackendStatus(const ManagedBackendFacts& facts,
                                                 const BackendReading& reading,
                                                 std::int64_t generation, std::string_view now);

// A managed backend being torn down (deleting, no pool left): what was last observed stays as it
// was (the store is going; nothing is read from it any more), usedBy and Deletable are current,
// and the phase is Deleting with `where` the teardown stands.
api::KVCacheBackend::Status teardownStatus(const BackendFacts& facts, std::string_view where,
                                           std::int64_t generation, std::string_view now);

// The TierWasEmpty condition was newly decided PreexistingContent between `before` and `after`:
// the controller then records the KVCacheTierNotEmpty Warning once, with this message.
std::optional<std::string> tierNotEmptyEvent(const api::KVCacheBackend::Status& before,
                                             const api::KVCacheBackend::Status& after);

}  // namespace kvc::policy
