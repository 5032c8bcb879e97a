#pragma once
// The KVCachePool reconciler, which also reconciles the pool's KVCachePoolBindings (contract §4,
// §5; only pools are reconciled — a Binding's event maps to the pool it names). One pass:
//
//   1. Finalizer on the (live) pool; resolve its one backend and the backend's Admin and Client
//      endpoints; claim the backend (the pool in backend.status.usedBy).
//   2. Every Binding of every pool on that backend (the master) is a claim on a reuse domain
//      (policy::desiredLedger): contested domains are left out.
//   3. A finalizer on every live Binding on the master — before any external write.
//   4. The ledger of the master: read; unless the backend is declared single-tenant, PUT each
//      desired domain's ceiling and DELETE only entries this operator registered (a releasing
//      Binding's, once due; a pool's former status.domains); read it back if it changed, and
//      pass again at once the other pools the writes reached (policy::ledgerRipple).
//   5. One /metrics scrape for the whole pass; every Binding's figures come from it.
//   6. For a managed multi-tenant backend, the tenant-quota policy ConfigMap (the master's seed).
//   7. The status of each Binding of this pool (policy::bindingStatus), releasing a deleting one
//      (its finalizer) when nothing holds it, the admission window has passed and its entry is
//      gone; then the pool's status (policy::poolStatus); a deleting pool that no Binding names
//      releases its backend claim and its finalizer.
//
// A Binding's release waits until kAdmissionWindow has passed since its deletionTimestamp and a
// fresh (live) list of labelled Pods naming it is empty: a Pod admitted by a webhook whose cache
// had not seen the deletion yet then holds the Binding (HeldByWorkloads) instead of being
// injected against a released tenant.
//
// Passes over one master are serialised (one lock per backend). The store's answers are
// reported in the statuses; a store failure is also returned as Unavailable after the statuses
// are written, so the key is retried with backoff (capped at the resync by the controller's rate
// limiter). Otherwise the pass ends with requeueAfter(resync), or sooner when a Binding's
// admission window closes first.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "kvc/api/binding.h"
#include "kvc/api/pool.h"
#include "kvc/common/clock.h"
#include "kvc/controllers/store_access.h"
#include "kvc/kube/client.h"
#include "kvc/runtime/controller.h"
#include "kvc/runtime/lister.h"
#include "kvc/runtime/metrics.h"
#include "kvc/runtime/owned.h"
#include "kvc/runtime/status_writer.h"
#include "kvc/runtime/store.h"

namespace kvc::controllers {

inline constexpr std::string_view kPoolControllerName = "kvcachepool";

struct PoolControllerConfig {
  kube::ClientPtr client;
  // Informer caches: pools (indexed kPoolsByBackend), bindings (kBindingsByPool), backends,
  // labelled Pods (heldPodProjection, indexed kPodsByBinding), ConfigMaps of the operator
  // namespace (for the tenant-quota policy; may be null: read live).
  const runtime::Cache* pools = nullptr;
  const runtime::Cache* bindings = nullptr;
  const runtime::Cache* backends = nullptr;
  const runtime::Cache* pods = nullptr;
  const runtime::Cache* config_maps = nullptr;
  // ModelDeployments (may be null: read live), to tell a usedBy entry left behind by a deployment
  // that is gone.
  const runtime::Cache* model_deployments = nullptr;
  AdminClientFactory stores;
  std::string operator_namespace = "gpustack-system";
  runtime::Registry* metrics = nullptr;
  Clock::Duration resync = std::chrono::seconds(30);
  // The Pod webhook's timeout: how long after a Binding's deletion began an admission that read
  // it before the deletion may still be in flight.
  Clock::Duration admission_window = std::chrono::seconds(10);
  // Enqueues a pool: the other pools of the master that a pass's ledger writes reached
  // (policy::ledgerRipple), passed again now rather than at their resync.
  std::function<void(const std::string& pool)> enqueue;
  const Clock* clock = &realClock();
};

// runtime::Reconciler
class PoolReconciler final : public runtime::Reconciler {
public:
  explicit PoolReconciler(PoolControllerConfig config);
  Result<runtime::Action> reconcile(const runtime::Request& request,
                                    std::stop_token stop) override;

private:
  struct Pass;
  std::mutex& masterLock(const std::string& backend);
  Status noteHolders(const api::KVCachePoolBinding& binding, Pass& pass, Clock::WallTime wall,
                     std::stop_token stop);
  // Whether the ModelDeployment ns/name exists: the cache, else a live read (NotFound: false).
  Result<bool> modelDeploymentExists(const std::string& ns, const std::string& name,
                                     std::stop_token stop);
  Result<runtime::Action> reconcilePool(const Json& pool_object, std::stop_token stop);
  Result<runtime::Action> releasePool(const api::KVCachePool& pool, const Json& pool_object,
                                      const Pass& pass, std::stop_token stop);
  Result<runtime::Action> releaseOrphans(const std::string& pool, std::stop_token stop);
  // Adds (held) or removes the pool from the backend's status.usedBy; writes only on a change.
  Status claimBackend(const std::string& backend_name, const std::string& pool, bool held,
                      std::stop_token stop);

  PoolControllerConfig config_;
  runtime::StatusWriter pool_status_;
  runtime::StatusWriter binding_status_;
  runtime::StatusWriter backend_status_;
  runtime::OwnedApplier owned_;
  runtime::Lister<api::KVCachePool> pools_;
  runtime::Lister<api::KVCachePoolBinding> bindings_;
  std::mutex locks_mutex_;
  std::map<std::string, std::unique_ptr<std::mutex>> locks_;
};

// The work-queue rate limiter of the pool controller: per-key exponential backoff from 5 ms,
// capped at `cap` (the resync), so a failing master is retried at least that often.
std::unique_ptr<runtime::RateLimiter> poolRateLimiter(Clock::Duration cap, const Clock& clock);

}  // namespace kvc::controllers
