#pragma once
// Everything a managed KVCacheBackend renders from its spec, in the order the controller applies
// it: the NetworkPolicies (store_network_policy.h), election RBAC (while electing), the leader
// Service, the leader Deployment, one member DaemonSet per group. The tenant-quota policy ConfigMap
// is rendered from the Bindings instead (tenant_quota_policy.h). Nothing is returned unless every
// object renders: a failed render applies nothing.

#include <vector>

#include "kvc/api/backend.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {

// `live_leader` is the leader Deployment as the cache holds it (null when absent), for the
// two-step rise of leaderReplicasNow.
Result<std::vector<RenderedObject>> renderStore(const api::KVCacheBackend& backend,
                                                const StoreInputs& inputs, const Json& live_leader);

}  // namespace kvc::policy
