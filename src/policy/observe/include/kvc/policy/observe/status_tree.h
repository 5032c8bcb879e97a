#pragma once
// `kvcache status`: one tree from each backend to its pools, each pool's Bindings and the
// workloads on each Binding (injected Pods and ModelDeployments), with the figures the objects
// report (capacity, quota, grants, usage, hit ratio; absent figures are shown absent, never as 0)
// and every condition that is not True. Objects whose parent is missing are listed under it by
// name, so nothing the cluster holds is left out.

#include <string>

#include "kvc/common/json.h"
#include "kvc/policy/observe/cluster_state.h"

namespace kvc::policy {

Json statusTreeJson(const ClusterState& state);
std::string statusTreeText(const ClusterState& state);

}  // namespace kvc::policy
