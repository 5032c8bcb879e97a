#pragma once
// What every rendered object of a managed KVCacheBackend shares (contract §3.1, §2.4): its
// names, its labels, the image and pull policy its containers run, and where the master is found.
// Pure: the controller supplies the operator namespace and the Setting's image.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/policy/store/leader_timing.h"

namespace kvc::policy {

inline constexpr int kMasterRpcPort = 50051;
inline constexpr int kMasterAdminPort = 9003;
inline constexpr int kMemberBasePort = 8080;  // group i listens on 8080 + i
inline constexpr std::string_view kPodSpecHashAnnotation = "kvcache.gpustack.ai/pod-spec-hash";
inline constexpr std::string_view kStoreRoleLabel = "mooncake.io/store-role";
// On the Lease `<b>-leader`: the holder's master RPC address, host:port, written by
// `kvcache store leader` with every renewal and read by Lease-addressed members.
inline constexpr std::string_view kMasterAddressAnnotation = "kvcache.gpustack.ai/master-address";

// The account of the store's Pods while no election runs: named explicitly, not left out, because
// the API server fills a Pod template's serviceAccountName from its deprecated serviceAccount
// field — left out, the election account of an earlier template would come back when the
// election is switched off, and its Pods would name an account that was pruned.
inline constexpr std::string_view kUnelectedServiceAccount = "default";

// What the renderers need besides the backend.
struct StoreInputs {
  std::string namespace_name;  // where the store runs: the operator's namespace
  std::string settings_image;  // the Setting kv-cache-backend-image ("" when cleared)
  // The Setting kv-cache-leader-lease-duration: the leader launcher's timing (leader_timing.h).
  std::chrono::seconds leader_lease = api::kDefaultLeaderLease;
};

std::string leaderName(std::string_view backend);                  // <b>-leader
std::string memberName(std::string_view backend);                  // <b>-member (RBAC)
std::string memberGroupName(std::string_view backend, int group);  // <b>-member-<i>
std::string leaderComponent();                                     // "leader"
std::string memberComponent(int group);                            // "member-<i>"

// The selector labels (name, instance, component) and, with part-of, the object labels.
Json selectorLabels(std::string_view backend, std::string_view component);
Json objectLabels(std::string_view backend, std::string_view component);

// True when electionBackend is Kubernetes (replicas > 1 require it; admission enforces).
bool electing(const api::KVCacheBackend& backend);

// True when the leader's image is this project's build (store_image.h), so its container runs
// `kvcache store leader` in front of mooncake_master; false for a published upstream image, whose
// container runs mooncake_master itself. True when no image resolves (nothing is rendered).
bool leaderLaunched(const api::KVCacheBackend& backend, const StoreInputs& inputs);
// The same for group i's image (nullopt: the leader's, as leaderLaunched): `kvcache store member`
// in front of mc_store_rest_server, or mc_store_rest_server itself.
bool memberLaunched(const api::KVCacheBackend& backend, std::optional<int> group,
                    const StoreInputs& inputs);
// An election runs: electing(backend), and the leader's image can run it (leaderLaunched). A
// published image at electionBackend Kubernetes runs one leader and no election.
bool elects(const api::KVCacheBackend& backend, const StoreInputs& inputs);

// The image of the leader (group = nullopt) or of group i: group > spec.image > Setting.
// FailedPrecondition naming both places when none is set.
Result<std::string> storeImage(const api::KVCacheBackend& backend, std::optional<int> group,
                               const StoreInputs& inputs);
// spec.imagePullPolicy, or resolved from the tag: Always for `:latest` or no tag (a digest
// counts as a tag), else IfNotPresent.
std::string pullPolicyFor(const api::KVCacheBackend& backend, std::string_view image);

// MOONCAKE_MASTER of group i's members (contract §3.3): `<b>-leader.<ns>.svc:50051`, or with
// Lease addressing while an election runs `k8s://<ns>/<b>-leader`, which `kvcache store member`
// resolves (a group on a published image cannot: it is given the Service).
std::string memberMasterAddress(const api::KVCacheBackend& backend, int group,
                                const StoreInputs& inputs);

// A group's transport in artifact spelling: its own unless Auto, else the backend's.
std::string groupProtocol(const api::KVCacheBackend& backend, int group);

// True when the group's transport is a fabric (rdma, efa): its members run on the host's network
// with the host's devices.
bool groupOnHostFabric(const api::KVCacheBackend& backend, int group);

// [{name: s}] of spec.imagePullSecrets.
Json pullSecrets(const api::KVCacheBackend& backend);

// A rendered object and what the ownership note says of it (runtime/owned.h adds the note and
// the owner reference when it is applied).
struct RenderedObject {
  Json object;
  std::string role;  // leader | member | tenant-quota-policy
  std::optional<int> group;
};

}  // namespace kvc::policy
