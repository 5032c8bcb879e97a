#include "kvc/policy/store/store_render.h"

#include "kvc/policy/store/store_leader.h"
#include "kvc/policy/store/store_member.h"
#include "kvc/policy/store/store_network_policy.h"

namespace kvc::policy {

Result<std::vector<RenderedObject>> renderStore(const api::KVCacheBackend& backend,
                                                const StoreInputs& inputs,
                                                const Json& live_leader) {
  // The NetworkPolicies first: a Pod the workloads start is guarded from its first packet.
  std::vector<RenderedObject> out = storeNetworkPolicies(backend, inputs);
  for (RenderedObject& rbac : electionRbac(backend, inputs)) {
    out.push_back(std::move(rbac));
  }
  out.push_back({leaderService(backend, inputs), "leader", std::nullopt});
  KVC_ASSIGN_OR_RETURN(
      Json deployment,
      leaderDeployment(backend, inputs, leaderReplicasNow(backend, inputs, live_leader)));
  out.push_back({std::move(deployment), "leader", std::nullopt});
  for (std::size_t i = 0; i < backend.spec.members.size(); ++i) {
    const int group = static_cast<int>(i);
    KVC_ASSIGN_OR_RETURN(Json daemon_set, memberDaemonSet(backend, group, inputs));
    out.push_back({std::move(daemon_set), "member", group});
  }
  return out;
}

}  // namespace kvc::policy
