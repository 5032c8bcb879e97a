#pragma once
// One snapshot of the objects `kvcache status` and `kvcache diagnose` read: our kinds, the Pods the
// webhook injected and the ModelDeployments, as the API server returned them (raw, so that an
// object this build cannot decode is still shown). Read by the command (a list each) or from a
// recorded file (the golden tests).

#include <optional>
#include <string>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::policy {

struct ClusterState {
  std::vector<Json> backends;
  std::vector<Json> pools;
  std::vector<Json> bindings;
  std::vector<Json> model_deployments;
  std::vector<Json> pods;  // those carrying the injection record
};

// Sorts each list by namespace and name (the output's order) and keeps, of the Pods, only those
// the webhook injected.
ClusterState normalizedState(ClusterState state);

// A state from documents of any of those kinds (a kind: List is unpacked); another kind is an
// InvalidArgument naming it.
Result<ClusterState> clusterStateFromObjects(const std::vector<Json>& objects);

// The condition of `type` on an object's status, when it reports one.
struct ConditionView {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
};
std::optional<ConditionView> conditionOf(const Json& object, std::string_view type);
std::vector<ConditionView> conditionsOf(const Json& object);

// True while the object is being deleted (its finalizers still run).
bool beingDeleted(const Json& object);

// Whether a condition says something now. Deletable=False (a backend its pools use) and
// Releasable=False (a Binding its workloads use) are the normal reading of an object in use: they
// matter only while it is being deleted. CacheUsed=Unknown (no engine Pod yet, or not Ready for
// the window yet) is the reading of a Binding the alarm cannot judge: only False matters. Every
// other condition always does.
bool mattersNow(const Json& object, const ConditionView& condition);

// "name" for a cluster-scoped object, "namespace/name" for a namespaced one.
std::string objectName(const Json& object);

}  // namespace kvc::policy
