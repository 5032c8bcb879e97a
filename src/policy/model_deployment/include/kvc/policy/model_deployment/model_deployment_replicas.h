#pragma once
// The replica Events of a ModelDeployment (contract §8: ReplicaEvicted, ReplicaLeaving,
// ReplicaRestarted, RuntimeVersionSkew), decided from its engine Pods — the Pods of its role
// Deployments, labelled app.kubernetes.io/{name: model-deployment, instance: <md>,
// component: <role>}. Pure; the controller records what these return on the ModelDeployment.
// docs/model-deployment.md ("Events") has the same rules for users.
//
// Transitions, from one Pod as it was before an update and as it is after (the informer's old
// and new object). A Pod seen for the first time has no "before" and says nothing, so an
// operator that restarts does not repeat what it already said.
//   ReplicaEvicted    Warning. `after` shows an eviction that `before` did not: its
//                     DisruptionTarget condition turned True (EvictionByEvictionAPI: a drain or
//                     an eviction; PreemptionByScheduler; DeletionByTaintManager: a NoExecute
//                     taint; TerminationByKubelet: node pressure or a node shutdown), or it Failed
//                     with status.reason Evicted (the kubelet's node-pressure eviction).
//   ReplicaLeaving    Normal. deletionTimestamp newly set on a Pod that shows no eviction: a
//                     scale-down, a rollout replacing it, or a delete. Names the grace period the
//                     engine has to finish its requests.
//   ReplicaRestarted  Warning. A container's restartCount rose: names the container, the count,
//                     how it last terminated (reason, exit code, the termination message, bounded)
//                     and the command that shows its logs.
// A Pod of a role that roles[].command took over is a replica all the same.
//
// Level, from every Pod of the deployment:
//   RuntimeVersionSkew  Warning. The running replicas of the current templates (Running, not
//                     deleting, carrying their role Deployment's current Pod-spec hash) run more
//                     than one engine build: the `engine` container's imageID — the digest the
//                     node resolved the image to — differs between them (its image when the
//                     runtime reports no imageID). Pods of an older template are left out: a
//                     rollout replaces them, which is no skew. The controller records it once per
//                     distinct set of builds (RuntimeSkew::signature), not once per pass.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/policy/model_deployment/model_deployment_status.h"

namespace kvc::policy {

// The Events a Pod's update says about its replica, in the order above (an eviction, then a
// departure it does not already explain, then each restarted container).
std::vector<ModelDeploymentEvent> replicaTransitionEvents(const Json& before, const Json& after);

// The ModelDeployment a Pod of a role belongs to: "<namespace>/<instance label>", or "" for a Pod
// without the labels of a rendered role.
std::string replicaOwnerKey(const Json& pod);

// Whether an update of an engine Pod moves what runtimeVersionSkew reads of it: its phase, its
// deletion, its template's Pod-spec hash, its engine build. The controller re-judges a deployment
// on those updates only, not on each status write a kubelet makes (readiness flips, restarts).
bool skewInputsChanged(const Json& before, const Json& after);

struct RuntimeSkew {
  std::string signature;  // the distinct builds, sorted and joined: stable while nothing changes
  ModelDeploymentEvent event;
};

// RuntimeVersionSkew over the Pods of one deployment; `current_hashes` maps each role to its
// live Deployment's template Pod-spec hash (a role missing there has no current Pods). nullopt
// while all the judged replicas run one build (or fewer than two are judged).
std::optional<RuntimeSkew> runtimeVersionSkew(
    std::string_view deployment, const std::vector<Json>& pods,
    const std::map<std::string, std::string>& current_hashes);

}  // namespace kvc::policy
