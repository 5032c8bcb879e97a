#pragma once
// What a Pod's status says is wrong with it (contract §2.6, the leader's and the members' Pod
// faults), read the way `kubectl describe` shows it, so a backend's conditions can name the Pod
// and what to look at:
//
//   Unschedulable     PodScheduled=False with reason Unschedulable (the scheduler's message)
//   InitCrashLooping  an init container that is not done restarted after a termination
//   CrashLooping      an app container that is not ready restarted after a termination
//   Waiting           a container waits for a reason other than ContainerCreating or
//                     PodInitializing (ImagePullBackOff, ErrImagePull, CreateContainerConfigError,
//                     …); an image pull in progress is ContainerCreating and no fault
//
// The first that applies wins, in that order. A Pod that is deleting, or that runs normally,
// has none. Crash messages give the restart count, the last exit code and the termination
// message (bounded), because that is where "no write permission on directory" shows.

#include <cstdint>
#include <optional>
#include <string>

#include "kvc/common/json.h"

namespace kvc::policy {

struct PodFault {
  enum class Kind { Unschedulable, InitCrashLooping, CrashLooping, Waiting };
  Kind kind = Kind::Waiting;
  std::string reason;  // Waiting: the container's waiting reason; otherwise ""
  std::string pod;     // the Pod's name
  std::string detail;  // what happened, without the Pod's name
};

std::optional<PodFault> podFault(const Json& pod);

// A Pod still Pending because a volume cannot be mounted: `note` is the kubelet's FailedMount
// Event about it ("" when there is none). Reason FailedMount; the detail names the node, the
// volume and its hostPath, and — for a hostPath type check (the disk tier's directory missing)
// — the fix: the directory created on that node for the Pod's user, as the walkthrough's Step 5
// shows. nullopt when the Pod is past its mounts or no Event names it.
inline constexpr std::string_view kReasonFailedMount = "FailedMount";
std::optional<PodFault> mountFault(const Json& pod, std::string_view note);

// "Pod <name>: <detail>".
std::string describePodFault(const PodFault& fault);

// The Pod's Ready condition is True.
bool podReady(const Json& pod);
// status.podIP, or "" before one is assigned.
std::string podAddress(const Json& pod);

}  // namespace kvc::policy
