#pragma once
// The KVCacheBackend reconciler (contract §2.5–§2.8, §3). Every pass is observe → plan → act
// (STYLE.md §15): it reads the backend from the cache and the pools of its status.usedBy that
// are definitely gone (runtime::CachedReader: only a live NotFound is gone; their claims are
// dropped), then one of three passes observes what it needs into a plain value, a pure plan of
// policy/store decides every write, status, Event and the requeue, and the pass carries the plan
// out in a fixed order, stopping at the first write that fails:
//
//   external (connection.external)  controllers/internal/external_backend.h: the store is
//       observed, never run — the finalizer, the master read through the spec's Admin endpoint
//       (at most three sequential reads, each with a 5 s deadline), the status
//       (policy::externalBackendStatus; Deletable from the pools left), and a deleting backend
//       that no pool uses loses its finalizer. requeueAfter(15 s), counted from its end.
//   managed (connection.managed)    controllers/internal/managed_backend.h: the store rendered,
//       applied and observed (policy::planManagedBackend).
//   teardown (managed, deleting, no pool left)  controllers/internal/backend_teardown.h: one
//       step per pass, every `teardown_poll` (policy::planTeardown).

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
#include "kvc/runtime/reader.h"
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
  // The FailedMount Events of the namespace, indexed kEventsByObject (null: none read).
  const runtime::Cache* mount_failures = nullptr;
  // Caches of the other rendered kinds (Services, ServiceAccounts, Roles, RoleBindings,
  // ConfigMaps, and the two above again), for applying, pruning and the teardown.
  std::vector<runtime::ChildSource> children;
  std::function<api::Settings()> settings;  // kv-cache-backend-image; null: the default
  runtime::EventRecorder* events = nullptr;
  // How often a teardown in progress is looked at again.
  Clock::Duration teardown_poll = std::chrono::seconds(2);
};

namespace internal {
class BackendTeardown;
class ExternalBackend;
class ManagedBackend;
}  // namespace internal

// runtime::Reconciler
class BackendReconciler final : public runtime::Reconciler {
public:
  explicit BackendReconciler(BackendControllerConfig config);
  ~BackendReconciler() override;
  Result<runtime::Action> reconcile(const runtime::Request& request, std::stop_token stop) override;

  // The backend controller with its informers, watches and filters, added to `manager`: backends
  // (spec, lifecycle, usedBy); the managed store's Deployments, DaemonSets, Pods, Services,
  // ServiceAccounts, Roles and RoleBindings in the operator namespace (by their instance label);
  // the Leases `<b>-leader` (a new holder); the Settings (every backend: kv-cache-backend-image).
  static Status setupWithManager(runtime::Manager& manager, const ControllerSetup& setup);

private:
  // The pools of usedBy that are definitely gone: a live NotFound (a cache miss, or a read that
  // fails, is not "gone").
  std::set<std::string> gonePools(const api::KVCacheBackend& backend, std::stop_token stop) const;

  BackendControllerConfig config_;
  runtime::StatusWriter status_;
  runtime::CachedReader pools_;
  std::unique_ptr<internal::ExternalBackend> external_;
  std::unique_ptr<internal::ManagedBackend> managed_;
  std::unique_ptr<internal::BackendTeardown> teardown_;
};

}  // namespace kvc::controllers
