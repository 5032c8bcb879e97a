#pragma once
// The KVCachePool reconciler, which also reconciles the pool's KVCachePoolBindings (contract §4,
// §5; only pools are reconciled — a Binding's event maps to the pool it names).
//
// One pass is observe → plan → act (STYLE.md §15), in two stages (policy/quota/pool_plan.h):
//   observe  everything the pass reads, into a policy::PoolObservation: the pool and its
//            Bindings from the cache; the backend cached, else live (only a live NotFound is
//            "missing"); every pool and Binding on the backend's master; what holds each deleting
//            Binding (its usedBy — a ModelDeployment that is gone is read live to be sure — the
//            labelled Pods naming it, and once its admission window has passed with none cached,
//            a live list of them); and the master's ledger (unless the backend is declared
//            single-tenant).
//   plan     policy::planPool, pure: first the ledger stage (the guards and the ledger writes),
//   act      carried out in order, stopping at the first write that fails: the pool's finalizer,
//            its claim on the backend, the finalizers of the master's live Bindings, the ledger's
//            PUTs and DELETEs; then the master as they left it (the ledger read back when
//            written, and the pass's one /metrics scrape);
//   plan     then the report stage, from what the master now says,
//   act      carried out in order: the other pools the writes reached (passed again through this
//            controller's trigger), the tenant-quota policy ConfigMap, each Binding's release or
//            status, the pool's release or status.
//
// Passes over one master are serialised (one lock per backend). The store's answers are
// reported in the statuses; a store failure is also returned as Unavailable after the statuses
// are written, so the key is retried with backoff (capped at the resync by the controller's rate
// limiter). Otherwise the pass ends with requeueAfter(resync), or sooner when a Binding's
// admission window closes first.
//
// Wiring (setupWithManager): pools (spec and lifecycle); Bindings, mapped to their pool (spec,
// lifecycle, and the usedBy a ModelDeployment writes); backends, mapped to the pools naming
// them (spec, lifecycle, published endpoints); labelled Pods, mapped to their Binding's pool
// while that Binding is deleting; and the controller's own trigger (the ripple).

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

#include "kvc/api/binding.h"
#include "kvc/api/pool.h"
#include "kvc/api/settings.h"
#include "kvc/common/clock.h"
#include "kvc/controllers/setup.h"
#include "kvc/controllers/store_access.h"
#include "kvc/kube/client.h"
#include "kvc/policy/quota/pool_plan.h"
#include "kvc/runtime/controller.h"
#include "kvc/runtime/events.h"
#include "kvc/runtime/lister.h"
#include "kvc/runtime/manager.h"
#include "kvc/runtime/metrics.h"
#include "kvc/runtime/owned.h"
#include "kvc/runtime/reader.h"
#include "kvc/runtime/status_writer.h"
#include "kvc/runtime/store.h"
#include "kvc/runtime/trigger.h"
#include "kvc/store/admin_client.h"

namespace kvc::controllers {

namespace internal {
class EngineCounterBook;
}

inline constexpr std::string_view kPoolControllerName = "kvcachepool";
// The controller that reads the engines' counters for the pool passes (internal/engine_counters.h).
inline constexpr std::string_view kEngineCounterReaderName = "engine-counters";

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
  // The replica Pods of ModelDeployments (replicaPodProjection, indexed kReplicasByDeployment;
  // may be null) and what the engine counter reader found at each engine Pod (may be null: no
  // Binding reports a hit rate or CacheUsed), for a Binding's status.hitRate and CacheUsed.
  const runtime::Cache* replica_pods = nullptr;
  std::shared_ptr<const internal::EngineCounterBook> engine_counters;
  // Where a Binding's CacheUsed turning False is told, on each engine Pod (may be null).
  runtime::EventRecorder* events = nullptr;
  // The Settings: kv-cache-backend-image tells a managed master on a published image, reached
  // without TLS (store_access.h). Null: the defaults.
  std::function<api::Settings()> settings;
  // The fence (ControllerSetup::leading_until): once it has passed, a pass writes no status.
  // Optional: unset, always.
  store::WriteFence leading_until;
  std::string operator_namespace = "gpustack-system";
  runtime::Registry* metrics = nullptr;
  Clock::Duration resync = std::chrono::seconds(30);
  // The Pod webhook's timeout: how long after a Binding's deletion began an admission that read
  // it before the deletion may still be in flight.
  Clock::Duration admission_window = std::chrono::seconds(10);
  // Fired for the other pools of the master that a pass's ledger writes reached
  // (policy::ledgerRipple), passed again now rather than at their resync. Optional; the
  // controller watching it enqueues them.
  std::shared_ptr<runtime::Trigger> ripple;
  const Clock* clock = &realClock();
};

// runtime::Reconciler
class PoolReconciler final : public runtime::Reconciler {
public:
  explicit PoolReconciler(PoolControllerConfig config);
  Result<runtime::Action> reconcile(const runtime::Request& request, std::stop_token stop) override;

  // The pool controller with its informers, indexes, watches and trigger, added to `manager`.
  static Status setupWithManager(runtime::Manager& manager, const ControllerSetup& setup);

private:
  // One pass at a time per master (its ledger plan reads what the last pass wrote), and what the
  // last pass found when that master left a ledger request unanswered: a pool whose master
  // another pass is waiting on is reported from it rather than left unreported (with three pools
  // on a hung master, two passes taking turns on its lock would otherwise starve the third).
  struct MasterSlot {
    std::timed_mutex pass;
    std::mutex silence_mutex;
    std::optional<std::string> silence;  // the unanswered request's error

    std::optional<std::string> silenceSeen();
    void record(const policy::MasterReading& reading);
  };
  MasterSlot& masterSlot(const std::string& key);
  // `silence` set: the pass does not hold the master; it asks it nothing and writes no ledger.
  Result<runtime::Action> reconcilePool(const Json& pool_object, MasterSlot& slot,
                                        const std::optional<std::string>& silence,
                                        std::stop_token stop);
  Result<runtime::Action> releaseOrphans(const std::string& pool, std::stop_token stop);

  // observe: everything the pass reads. An error means nothing was written.
  Result<policy::PoolObservation> observe(const Json& pool_object, std::stop_token stop);
  Status observeHolds(const api::KVCachePoolBinding& binding, Clock::WallTime wall,
                      policy::PoolObservation& seen, std::stop_token stop);
  std::unique_ptr<store::AdminClient> observeLedger(policy::PoolObservation& seen,
                                                    const std::optional<std::string>& silence);

  // act, the ledger stage: the guards, then the ledger's writes and the master as they left it
  // (recorded in `seen` for the report stage's plan).
  Status actGuards(const policy::PoolPlan& plan, const Json& pool_object,
                   const policy::PoolObservation& seen, std::stop_token stop);
  void finishLedgerStage(const policy::PoolPlan& plan, store::AdminClient* master,
                         policy::PoolObservation& seen);
  // act, the report stage: the ripple, the tenant-quota policy, the Bindings, the pool.
  using ReadingSource = std::function<const policy::MasterReading&()>;
  Result<runtime::Action> act(const policy::PoolPlan& plan, const Json& pool_object,
                              const policy::PoolObservation& seen, std::stop_token stop);
  void applyTenantPolicy(const policy::PoolPlan& plan, const policy::PoolObservation& seen,
                         std::stop_token stop);
  Status actBindings(const policy::PoolPlan& plan, const policy::PoolObservation& seen,
                     const ReadingSource& pass_reading, std::stop_token stop);
  // The engine Pods of each live Binding of the pool, as the counter reader last saw them.
  void observeUses(policy::PoolObservation& seen) const;
  // A KVCacheUnused Event on each engine Pod Ready for the window, when CacheUsed turned False.
  void recordCacheUnused(const policy::BindingStatusPlan& planned,
                         const policy::PoolObservation& seen) const;
  Result<runtime::Action> actPool(const policy::PoolPlan& plan, const Json& pool_object,
                                  const policy::PoolObservation& seen,
                                  const ReadingSource& pass_reading, std::stop_token stop);
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
  runtime::CachedReader backend_reader_;
  runtime::CachedReader model_deployment_reader_;
  std::mutex masters_mutex_;
  std::map<std::string, std::unique_ptr<MasterSlot>> masters_;
};

// The work-queue rate limiter of the pool controller: per-key exponential backoff from 5 ms,
// capped at `cap` (the resync), so a failing master is retried at least that often.
std::unique_ptr<runtime::RateLimiter> poolRateLimiter(Clock::Duration cap, const Clock& clock);

}  // namespace kvc::controllers
