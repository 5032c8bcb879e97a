#pragma once
// The teardown of a managed KVCacheBackend (contract §2.8, §3.7): a backend that is being
// deleted and that no pool uses any more. One step per pass, every `teardown_poll`, observe →
// plan → act, with every decision in policy::planTeardown (policy/store/teardown_plan.h):
//
//   observe  every object of the store's kinds in the operator namespace that carries this
//            backend's ownership note (Deployments, DaemonSets, Services, RoleBindings, Roles,
//            ServiceAccounts, ConfigMaps: cached, else listed live) and the store's own Pods;
//            once none is left, the Nodes each cleanAfterDelete group selects (a live list),
//            its cleanup Pods, and the other backends (whose tiers may share a path).
//   act      a. those objects deleted in the foreground (guarded by uid), and
//               KVCacheWorkloadNotTerminated (Warning, on the backend) for a workload still
//               there after its Pods' grace + 2 min, naming the nodes its Pods are on;
//            b. the Lease `<b>-leader` the store wrote deleted;
//            c. one cleanup Pod created per selected node that has none (owned by the backend,
//               with our note), and once every one has ended, the Node Events
//               KVCacheTierNotCleaned, KVCacheTierPartlyEmptied, KVCacheTierSharedPath;
//            d. the finalizer removed — or, while a step is under way, the status saying where
//               it stands (phase Deleting), and requeueAfter(teardown_poll).
// Every failure names the teardown ("tearing down KVCacheBackend <b>: …") and is retried with
// backoff; the next pass plans again from what is there.

#include <set>
#include <stop_token>
#include <string>

#include "kvc/api/backend.h"
#include "kvc/controllers/backend_controller.h"
#include "kvc/policy/store/teardown_plan.h"

namespace kvc::controllers::internal {

class BackendTeardown {
public:
  BackendTeardown(const BackendControllerConfig& config, const runtime::StatusWriter& status)
      : config_(config), status_(status) {}

  // `object` is the backend as cached; `gone` the pools of its usedBy that are definitely gone.
  Result<runtime::Action> reconcile(const Json& object, const api::KVCacheBackend& backend,
                                    const std::set<std::string>& gone, std::stop_token stop);

private:
  Result<policy::TeardownObservation> observe(const Json& object,
                                              const api::KVCacheBackend& backend,
                                              const std::set<std::string>& gone,
                                              std::stop_token stop) const;
  Status observeChildren(const Json& object, policy::TeardownObservation& seen,
                         std::stop_token stop) const;
  Status observeTiers(policy::TeardownObservation& seen, std::stop_token stop) const;

  // a–c, stopping at the first failure.
  Status act(const Json& object, const policy::TeardownPlan& plan, std::stop_token stop) const;
  Status createCleaners(const Json& object, const policy::TeardownPlan& plan,
                        std::stop_token stop) const;
  // d.
  Result<runtime::Action> release(const policy::TeardownPlan& plan,
                                  const policy::TeardownObservation& seen,
                                  std::stop_token stop) const;
  Status writeStatus(const policy::TeardownPlan& plan, const policy::TeardownObservation& seen,
                     std::stop_token stop) const;

  const BackendControllerConfig& config_;
  const runtime::StatusWriter& status_;
};

}  // namespace kvc::controllers::internal
