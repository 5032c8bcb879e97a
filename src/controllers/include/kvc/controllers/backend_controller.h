#pragma once
// The KVCacheBackend reconciler. A managed backend (connection.managed) is rendered, run and
// observed: see controllers/internal/managed_backend.h for its pass and its teardown.
//
// External branch (connection.external; contract §2.5–§2.8): the store is observed, never run.
// One pass:
//
//   1. A finalizer on the live backend.
//   2. status.endpoints copied from the spec.
//   3. The master read through its Admin endpoint — /health, then, only while it serves,
//      /metrics and /get_segments_detail: at most three sequential reads, each with a 5 s
//      deadline, no redirects — into capacity, members and the conditions LeaderAvailable,
//      CapacityObserved, MembersMounted, PoolWrites (policy::externalBackendStatus).
//   4. status.usedBy (written by the pool reconciler) pruned of pools that are definitely gone
//      (a live NotFound); Deletable from what is left.
//   5. The status written; a deleting backend that no pool uses loses its finalizer.
// The pass ends with requeueAfter(15 s), counted from its end.

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/api/settings.h"
#include "kvc/common/clock.h"
#include "kvc/controllers/setup.h"
#include "kvc/controllers/store_access.h"
#include "kvc/kube/client.h"
#include "kvc/runtime/controller.h"
#include "kvc/runtime/events.h"
#include "kvc/runtime/manager.h"
#include "kvc/runtime/metrics.h"
#include "kvc/runtime/owned.h"
#include "kvc/runtime/status_writer.h"
#include "kvc/runtime/store.h"

namespace kvc::controllers {

inline constexpr std::string_view kBackendControllerName = "kvcachebackend";

struct BackendControllerConfig {
  kube::ClientPtr client;
  const runtime::Cache* backends = nullptr;
  const runtime::Cache* pools = nullptr;
  AdminClientFactory stores;
  runtime::Registry* metrics = nullptr;
  Clock::Duration resync = std::chrono::seconds(15);
  const Clock* clock = &realClock();

  // Managed backends. The store runs in the operator's namespace; its objects are read from
  // these caches (informers on that namespace, label app.kubernetes.io/name=kv-cache-backend;
  // a null cache is read live).
  std::string operator_namespace = "gpustack-system";
  const runtime::Cache* deployments = nullptr;
  const runtime::Cache* daemon_sets = nullptr;
  const runtime::Cache* store_pods = nullptr;
  const runtime::Cache* leases = nullptr;  // every Lease of the namespace
  // Caches of the other rendered kinds (Services, ServiceAccounts, Roles, RoleBindings,
  // ConfigMaps, and the two above again), for applying, pruning and the teardown.
  std::vector<runtime::ChildSource> children;
  std::function<api::Settings()> settings;  // kv-cache-backend-image; null: the default
  runtime::EventRecorder* events = nullptr;
  // How often a teardown in progress is looked at again.
  Clock::Duration teardown_poll = std::chrono::seconds(2);
};

namespace internal {
class ManagedBackend;
}

// runtime::Reconciler
class BackendReconciler final : public runtime::Reconciler {
public:
  explicit BackendReconciler(BackendControllerConfig config);
  ~BackendReconciler() override;
  Result<runtime::Action> reconcile(const runtime::Request& request,
                                    std::stop_token stop) override;

  // The backend controller with its informers, watches and filters, added to `manager`: backends
  // (spec, lifecycle, usedBy); the managed store's Deployments, DaemonSets, Pods, Services,
  // ServiceAccounts, Roles and RoleBindings in the operator namespace (by their instance label);
  // the Leases `<b>-leader` (a new holder); the Settings (every backend: kv-cache-backend-image).
  static Status setupWithManager(runtime::Manager& manager, const ControllerSetup& setup);

private:
  Result<runtime::Action> reconcileExternal(const Json& object,
                                            const api::KVCacheBackend& backend,
                                            const std::set<std::string>& gone,
                                            std::stop_token stop);

  BackendControllerConfig config_;
  runtime::StatusWriter status_;
  std::unique_ptr<internal::ManagedBackend> managed_;
};

}  // namespace kvc::controllers
