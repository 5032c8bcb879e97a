#pragma once
// The NetworkPolicies of a managed KVCacheBackend (docs/security.md, "Who reaches which port"):
// ingress only, one per workload, applied before the workloads and deleted after them, so that no
// store Pod ever runs unguarded.
//
//   <b>-leader      the leader Pods. The master's RPC port (50051) from Pods carrying the inject
//                   label (any namespace), ModelDeployment role Pods (any namespace), the
//                   backend's own Pods and the operator's; the admin port (9003) from the
//                   operator's Pods only. A scraper is admitted by the install's
//                   `kvcache-store-metrics` policy instead (deploy/operator/networkpolicy.yaml).
//                   Nothing else — the launcher's 9004 is for the kubelet, which every
//                   implementation admits from the node.
//   <b>-member-<i>  group i's Pods: its transfer ports from the same clients and the backend's own
//                   Pods. The transfer engine binds ports nobody configured, so they are ranges
//                   (seed: "written as a range, not a list"): the P2P handshake and TCP data range
//                   15000–17000 (MC_MIN_RPC_PORT..MC_MAX_RPC_PORT when the group's extraEnv sets
//                   them), the store client's self-bind range 12300–14300
//                   (MC_STORE_CLIENT_MIN_PORT..MAX_PORT), and with a disk tier the ephemeral
//                   range 32768–60999 its offload RPC server binds port 0 in.
//
// A group on a fabric transport (rdma, efa) runs on the host's network: a NetworkPolicy does not
// select host-network Pods, and their clients reach the master from node addresses no Pod
// selector matches. So no member policy is rendered for such a group, and while any group is
// one, the leader's RPC port is open to every source (its admin port stays the operator's):
// the administrator guards the fabric's nodes (docs/security.md).

#include <string>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/common/json.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {

// The labels of the operator's own Pods (deploy/operator/deployment.yaml).
inline constexpr std::string_view kOperatorAppName = "kvcache-operator";

// A port range a policy opens (`end` == `start` for one port).
struct PortRange {
  int start = 0;
  int end = 0;
};

// The ranges group `group`'s members accept transfers on, from its transport, disk tier and
// extraEnv (a port variable that is not a number in 1–65535, or a MIN above its MAX, is ignored:
// the store falls back to its default range then too).
std::vector<PortRange> memberTransferPorts(const api::KVCacheBackend& backend, int group);

// `<b>-leader`, then `<b>-member-<i>` per group not on a fabric transport.
std::vector<RenderedObject> storeNetworkPolicies(const api::KVCacheBackend& backend,
                                                 const StoreInputs& inputs);

}  // namespace kvc::policy
