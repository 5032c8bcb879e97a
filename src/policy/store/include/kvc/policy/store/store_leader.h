#pragma once
// The leader side of a managed KVCacheBackend (contract §3.2–§3.4), rendered from the spec alone:
// the Deployment `<b>-leader`, its ClusterIP Service, and while electing the ServiceAccounts,
// Roles and RoleBindings `<b>-leader` and `<b>-member`.
//
// Design choice (DESIGN.md §2, "who elects the store leader"): the container runs
// `kvcache store leader`, which holds the Lease `<b>-leader` and starts `mooncake_master` with the
// flags after `--` only while it holds it. So the master gets none of Mooncake's HA flags (the
// contract's argument rows 4 and 8); the launcher gets the Lease and the Pod's identity instead.
// Readiness stays the contract's `GET /get_all_segments` on the master's admin port (a standby
// runs no master, so it is unready), but every second instead of every 5 s (the reference's
// period): a failover is not over until the new master is in the Service, and at 5 s the probe
// alone could spend the whole budget above the Lease duration (measured: docs/backends.md);
// liveness asks the launcher (`GET /healthz` on port
// `launcher`, 9004), because a standby has no master whose `/health` could answer and the
// contract's liveness would restart every standby within a minute.
//
// A published upstream image (store_image.h) has no launcher: its container runs mooncake_master
// itself with the contract's probes on the admin port, at one replica, with no election.

#include <optional>
#include <string>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {

inline constexpr int kLeaderLauncherPort = 9004;
inline constexpr int kLeaderReadinessPeriodSeconds = 1;
inline constexpr std::string_view kPolicyMountDir = "/var/lib/mooncake";
inline constexpr std::string_view kPolicySeedDir = "/etc/mooncake/tenant-quota-policy";

// The flags `mooncake_master` gets, in the contract's order (rows 1–3, 5, 6, 7, 9). Launched
// (this project's image, store_image.h): the admin listener on the Pod's loopback behind the
// launcher; else on the admin port itself.
std::vector<std::string> masterArguments(const api::KVCacheBackend& backend, bool launched);

// The Deployment as wanted now. `replicas` is what to write this pass (the two-step rise, below).
Result<Json> leaderDeployment(const api::KVCacheBackend& backend, const StoreInputs& inputs,
                              std::int64_t replicas);

// The replicas to write (contract §3.2 "two-step rise"): 1 unless an election runs (elects());
// then `leader.replicas` only once the live Deployment (null when absent) already runs the
// electing template, observed and fully rolled out to it; else 1 first.
std::int64_t leaderReplicasNow(const api::KVCacheBackend& backend, const StoreInputs& inputs,
                               const Json& live);

Json leaderService(const api::KVCacheBackend& backend, const StoreInputs& inputs);

// ServiceAccount, Role and RoleBinding for `<b>-leader` and `<b>-member`, in that order; empty
// when no election runs (the controller prunes what exists).
std::vector<RenderedObject> electionRbac(const api::KVCacheBackend& backend,
                                         const StoreInputs& inputs);

}  // namespace kvc::policy
