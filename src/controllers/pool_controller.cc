#include "kvc/controllers/pool_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "internal/engine_counters.h"
#include "internal/informers.h"
#include "internal/master_reader.h"
#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/binding_conditions.h"
#include "kvc/api/model_deployment.h"
#include "kvc/api/pool.h"
#include "kvc/api/pool_conditions.h"
#include "kvc/controllers/indexes.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/runtime/finalizer.h"
#include "kvc/runtime/rate_limiter.h"

namespace kvc::controllers {
namespace {

using api::KVCacheBackend;
using api::KVCachePool;
using api::KVCachePoolBinding;

// The backend's status with one part changed by the pool controller: its observedGeneration is
// the backend controller's to stamp, and stays as that controller wrote it.
Json keptGenerationStatus(const Json& current, const KVCacheBackend::Status& status) {
  Json out = api::backendStatusToJson(status);
  out.erase("observedGeneration");
  if (current.contains("status") && current["status"].is_object() &&
      current["status"].contains("observedGeneration")) {
    out["observedGeneration"] = current["status"]["observedGeneration"];
  }
  return out;
}

// How long a pass waits for its master's lock held by another worker's pass, and when it is
// retried if that was not enough.
constexpr auto kMasterBusyWait = std::chrono::milliseconds(250);
constexpr Clock::Duration kMasterBusyRetry = std::chrono::seconds(1);

// A finalizer patch that found its object gone has nothing left to guard.
Status unlessGone(Status status) {
  return status.code() == StatusCode::NotFound ? okStatus() : status;
}

}  // namespace

std::unique_ptr<runtime::RateLimiter> poolRateLimiter(Clock::Duration cap, const Clock& clock) {
  std::vector<std::unique_ptr<runtime::RateLimiter>> limiters;
  limiters.push_back(std::make_unique<runtime::ItemExponentialFailureRateLimiter>(
      std::chrono::milliseconds(5), cap));
  limiters.push_back(std::make_unique<runtime::BucketRateLimiter>(10.0, 100, clock));
  return std::make_unique<runtime::MaxOfRateLimiter>(std::move(limiters));
}

PoolReconciler::PoolReconciler(PoolControllerConfig config)
    : config_(std::move(config)),
      pool_status_(config_.client, kube::resources::kvCachePools(), config_.metrics,
                   *config_.clock),
      binding_status_(config_.client, kube::resources::kvCachePoolBindings(), config_.metrics,
                      *config_.clock),
      backend_status_(config_.client, kube::resources::kvCacheBackends(), config_.metrics,
                      *config_.clock, runtime::StatusWriter::Generation::Keep),
      owned_(config_.client),
      pools_(*config_.pools, &api::poolFromJson, std::string(api::kKindPool)),
      bindings_(*config_.bindings, &api::bindingFromJson, std::string(api::kKindBinding)),
      backend_reader_(config_.client, kube::resources::kvCacheBackends(), config_.backends),
      model_deployment_reader_(config_.client, kube::resources::modelDeployments(),
                               config_.model_deployments) {}

PoolReconciler::MasterSlot& PoolReconciler::masterSlot(const std::string& key) {
  std::lock_guard<std::mutex> guard(masters_mutex_);
  auto& slot = masters_[key];
  if (!slot) {
    slot = std::make_unique<MasterSlot>();
  }
  return *slot;
}

std::optional<std::string> PoolReconciler::MasterSlot::silenceSeen() {
  std::lock_guard<std::mutex> guard(silence_mutex);
  return silence;
}

// Only a pass that reached the master's client updates it: one whose request went unanswered
// sets it, any other clears it. (A backend that could not be addressed asked nothing.)
void PoolReconciler::MasterSlot::record(const policy::MasterReading& reading) {
  std::lock_guard<std::mutex> guard(silence_mutex);
  if (reading.ledger_unanswered) {
    silence = reading.ledger_error;
  } else {
    silence.reset();
  }
}

Result<runtime::Action> PoolReconciler::reconcile(const runtime::Request& request,
                                                  std::stop_token stop) {
  runtime::ObjectPtr pool = config_.pools->get(request.name);
  if (!pool) {
    return releaseOrphans(request.name, stop);
  }
  const std::vector<std::string> backends = poolBackends(*pool);
  MasterSlot& slot = masterSlot(backends.size() == 1 ? backends.front() : "pool/" + request.name);
  // A pass on a master that answers takes milliseconds (a sibling pool's ripple waits that
  // long); one on a master that accepts and never answers holds it for a request deadline. A
  // worker does not wait that out: it leaves the pass for later and serves other backends' pools.
  std::unique_lock<std::timed_mutex> guard(slot.pass, kMasterBusyWait);
  if (guard.owns_lock()) {
    return reconcilePool(*pool, slot, std::nullopt, stop);
  }
  const std::optional<std::string> silence = slot.silenceSeen();
  if (!silence) {
    spdlog::debug("pool {}: another pass holds its master; retried in {} ms", request.name,
                  std::chrono::duration_cast<std::chrono::milliseconds>(kMasterBusyRetry).count());
    return runtime::Action::requeueAfter(kMasterBusyRetry);
  }
  // That pass is waiting out a master that left the last request unanswered: this pool is
  // reported from that answer (LedgerUnreachable, so the pass ends Unavailable) and passed again
  // at the busy-retry pace, for real once the lock is free.
  auto reported = reconcilePool(*pool, slot, silence, stop);
  spdlog::debug(
      "pool {}: another pass waits on its master, which left the last request "
      "unanswered; reported from that ({}), retried in {} ms",
      request.name, reported.ok() ? "ok" : reported.status().message(),
      std::chrono::duration_cast<std::chrono::milliseconds>(kMasterBusyRetry).count());
  return runtime::Action::requeueAfter(kMasterBusyRetry);
}

Result<runtime::Action> PoolReconciler::reconcilePool(const Json& pool_object, MasterSlot& slot,
                                                      const std::optional<std::string>& silence,
                                                      std::stop_token stop) {
  KVC_ASSIGN_OR_RETURN(policy::PoolObservation seen, observe(pool_object, stop));
  const std::unique_ptr<store::AdminClient> master = observeLedger(seen, silence);
  // The ledger stage: the guards, the ledger's writes, then the master as they left it.
  const policy::PoolPlan guarded = policy::planPool(seen);
  KVC_RETURN_IF_ERROR(actGuards(guarded, pool_object, seen, stop));
  finishLedgerStage(guarded, master.get(), seen);
  if (master) {
    slot.record(seen.reading);
  }
  // A replica whose leadership ended during the pass sent no write after its fence and reports
  // nothing either: what it read is its successor's to report (a refused write is not a ledger
  // that cannot be reached).
  if (config_.leading_until && config_.clock->now() >= config_.leading_until()) {
    return Status(StatusCode::Aborted, "pool " + seen.pool.metadata.name +
                                           ": leadership ended during the pass; nothing more "
                                           "is written (the new leader reconciles it)");
  }
  // The report stage, from what the master now says.
  return act(policy::planPool(seen), pool_object, seen, stop);
}

// Bindings naming a pool that is gone: nothing is owed to any ledger, so a deleting one is let
// go; live ones wait for their pool to come back. (Read raw: one that does not decode is let go
// too.)
Result<runtime::Action> PoolReconciler::releaseOrphans(const std::string& pool,
                                                       std::stop_token stop) {
  const kube::Api bindings(config_.client, kube::resources::kvCachePoolBindings());
  for (const runtime::ObjectPtr& object : config_.bindings->byIndex(kBindingsByPool, pool)) {
    if (kube::object::isDeleting(*object) &&
        runtime::hasFinalizer(*object, api::binding::kFinalizer)) {
      KVC_RETURN_IF_ERROR(
          runtime::removeFinalizer(bindings.inNamespace(kube::object::namespaceName(*object)),
                                   *object, api::binding::kFinalizer, stop));
    }
  }
  return runtime::Action::done();
}

// ---- observe ----------------------------------------------------------------------------------

Result<policy::PoolObservation> PoolReconciler::observe(const Json& pool_object,
                                                        std::stop_token stop) {
  policy::PoolObservation seen;
  KVC_ASSIGN_OR_RETURN(seen.pool, api::poolFromJson(pool_object));
  const Clock::WallTime wall = config_.clock->wallNow();
  seen.now = kube::formatTime(wall);
  seen.operator_namespace = config_.operator_namespace;
  seen.resync = config_.resync;
  for (const auto& binding : bindings_.byIndex(kBindingsByPool, seen.pool.metadata.name)) {
    seen.bindings.push_back(*binding);
  }
  if (seen.pool.spec.backends.size() == 1 && !seen.pool.spec.backends.front().empty()) {
    const std::string& name = seen.pool.spec.backends.front();
    auto object = backend_reader_.get("", name, stop);
    if (!object.ok()) {
      return object.status().withContext("reading KVCacheBackend " + name);
    }
    if (*object) {
      // One that does not decode is not resolved (NotFound), as one that does not exist.
      if (auto decoded = api::backendFromJson(***object); decoded.ok()) {
        seen.backend = std::move(decoded).value();
      }
    }
  }
  const policy::PoolBackend backend = policy::poolBackend(seen.pool, seen.backend);
  if (backend.resolved()) {
    // Every claim on the master: the Bindings of every pool naming exactly this backend.
    seen.siblings = pools_.byIndex(kPoolsByBackend, backend.name);
    for (const auto& sibling : seen.siblings) {
      if (sibling->spec.backends.size() != 1) {
        continue;
      }
      for (auto& binding : bindings_.byIndex(kBindingsByPool, sibling->metadata.name)) {
        seen.master_bindings.push_back(std::move(binding));
      }
    }
  }
  for (const auto& binding : seen.master_bindings) {
    if (binding->metadata.deleting) {
      KVC_RETURN_IF_ERROR(observeHolds(*binding, wall, seen, stop));
    }
  }
  for (const KVCachePoolBinding& binding : seen.bindings) {
    if (binding.metadata.deleting) {
      KVC_RETURN_IF_ERROR(observeHolds(binding, wall, seen, stop));
    }
  }
  observeUses(seen);
  return seen;
}

void PoolReconciler::observeUses(policy::PoolObservation& seen) const {
  if (!config_.engine_counters) {
    return;
  }
  const api::Settings settings = config_.settings ? config_.settings() : api::Settings{};
  const internal::EnginePodSources sources{config_.pods, config_.model_deployments,
                                           config_.replica_pods};
  const Clock::WallTime now = config_.clock->wallNow();
  for (const KVCachePoolBinding& binding : seen.bindings) {
    const std::string key = binding.metadata.namespace_name + "/" + binding.metadata.name;
    seen.uses[key] = internal::bindingUseOf(sources, *config_.engine_counters, settings, key, now);
  }
}

void PoolReconciler::recordCacheUnused(const policy::BindingStatusPlan& planned,
                                       const policy::PoolObservation& seen) const {
  const api::Condition* before =
      api::findCondition(planned.facts.binding.status.conditions, policy::kCacheUsed);
  const api::Condition* after = api::findCondition(planned.status.conditions, policy::kCacheUsed);
  const bool turned_false = after != nullptr && after->status == api::kConditionFalse &&
                            (before == nullptr || before->status != api::kConditionFalse);
  if (!turned_false || config_.events == nullptr || !planned.facts.use) {
    return;
  }
  const KVCachePoolBinding& binding = planned.facts.binding;
  for (const policy::EnginePodUse* pod : policy::unusedPods(*planned.facts.use)) {
    const Json regarding = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", pod->name}, {"namespace", binding.metadata.namespace_name}}}};
    config_.events->event(
        regarding, runtime::EventType::Warning, policy::kEventReasonCacheUnused, "ReadCounters",
        policy::cacheUnusedNote(*pod, binding.spec.domain.name, binding.metadata.namespace_name,
                                binding.metadata.name));
  }
  spdlog::warn("pool {}: KVCachePoolBinding {} caches nothing: {}", seen.pool.metadata.name,
               planned.key, after->message);
}

// What still references a deleting Binding (its usedBy, the labelled Pods naming it), and how
// long its admission window has to run. Once the window has passed and the cache shows no Pod,
// a fresh list of the namespace's labelled Pods decides.
Status PoolReconciler::observeHolds(const KVCachePoolBinding& binding, Clock::WallTime wall,
                                    policy::PoolObservation& seen, std::stop_token stop) {
  const std::string key = kube::object::key(binding.metadata.namespace_name, binding.metadata.name);
  if (seen.holds.count(key) > 0) {
    return okStatus();
  }
  policy::BindingHold hold;
  for (const api::ObjectReference& user : binding.status.used_by) {
    if (user.kind == api::kKindModelDeployment) {
      // Its controller removes the entry before the deployment goes; an entry left behind means
      // its finalizer was taken off by hand, and nothing holds the Binding any more.
      auto exists =
          model_deployment_reader_.exists(binding.metadata.namespace_name, user.name, stop);
      if (!exists.ok()) {
        return exists.status().withContext(
            "reading ModelDeployment " +
            kube::object::key(binding.metadata.namespace_name, user.name));
      }
      if (!*exists) {
        hold.gone_users.push_back(user.name);
        continue;
      }
    }
    hold.holders.push_back(user.kind + "/" + user.name);
  }
  for (const runtime::ObjectPtr& pod : config_.pods->byIndex(kPodsByBinding, key)) {
    if (podActive(*pod)) {
      hold.holders.push_back("Pod/" + kube::object::name(*pod));
    }
  }
  if (auto deleted = kube::parseTime(binding.metadata.deletion_timestamp); deleted.ok()) {
    hold.window_left_seconds = policy::admissionWindowLeft(
        wall - *deleted,
        std::chrono::duration_cast<std::chrono::system_clock::duration>(config_.admission_window));
    if (hold.window_left_seconds) {
      hold.window_closes = kube::formatTime(
          *deleted + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                         config_.admission_window));
    }
  }
  if (hold.holders.empty() && !hold.window_left_seconds) {
    kube::Api pods(config_.client, kube::resources::pods(), binding.metadata.namespace_name);
    kube::ListParams params;
    params.label_selector = heldPodSelector();
    auto listed = pods.listAll(params, 500, stop);
    if (!listed.ok()) {
      return listed.status().withContext("listing the labelled Pods of namespace " +
                                         binding.metadata.namespace_name);
    }
    for (const Json& pod : listed->items) {
      const std::vector<std::string> named = podBinding(pod);
      if (!named.empty() && named.front() == key && podActive(pod)) {
        hold.holders.push_back("Pod/" + kube::object::name(pod));
      }
    }
  }
  std::sort(hold.holders.begin(), hold.holders.end());
  hold.holders.erase(std::unique(hold.holders.begin(), hold.holders.end()), hold.holders.end());
  seen.holds[key] = std::move(hold);
  return okStatus();
}

// The master of a resolved backend: its admin client for the pass (null when none could be made:
// the reading says why) and its ledger, unless the backend is declared single-tenant (then no
// request is made).
std::unique_ptr<store::AdminClient> PoolReconciler::observeLedger(
    policy::PoolObservation& seen, const std::optional<std::string>& silence) {
  const policy::PoolBackend backend = policy::poolBackend(seen.pool, seen.backend);
  if (!backend.resolved()) {
    return nullptr;
  }
  policy::MasterReading& reading = seen.reading;
  reading.admin_address = backend.admin_address;
  if (seen.backend->spec.managed && !seen.backend->spec.multi_tenancy) {
    reading.ledger = policy::LedgerState::NoLedger;
    reading.declared_single_tenant = true;
  }
  if (silence && !reading.declared_single_tenant) {
    reading.ledger = policy::LedgerState::Unreachable;
    reading.ledger_error = *silence;
    reading.ledger_unanswered = true;
    reading.scrape_error = "not attempted: " + *silence;
    return nullptr;
  }
  const std::string settings_image = config_.settings ? config_.settings().kv_cache_backend_image
                                                      : std::string(api::kDefaultBackendImage);
  auto client = config_.stores(storeTarget(*seen.backend, backend.admin_address, settings_image));
  if (!client.ok()) {
    reading.ledger = policy::LedgerState::Unreachable;
    reading.ledger_error = client.status().message();
    reading.scrape_error = client.status().message();
    return nullptr;
  }
  if (!reading.declared_single_tenant) {
    internal::LedgerSession(**client).read(reading);
  }
  return std::move(client).value();
}

// ---- act --------------------------------------------------------------------------------------

// 5–9: the report stage.
Result<runtime::Action> PoolReconciler::act(const policy::PoolPlan& plan, const Json& pool_object,
                                            const policy::PoolObservation& seen,
                                            std::stop_token stop) {
  if (config_.ripple) {
    for (const std::string& pool : plan.ripple) {
      config_.ripple->fire(runtime::Request{"", pool});
    }
  }
  applyTenantPolicy(plan, seen, stop);
  // A status decided again from a newer object reads what this pass's plan read.
  std::optional<policy::MasterReading> reading;
  const auto pass_reading = [&]() -> const policy::MasterReading& {
    if (!reading) {
      reading = policy::passReading(seen);
    }
    return *reading;
  };
  KVC_RETURN_IF_ERROR(actBindings(plan, seen, pass_reading, stop));
  return actPool(plan, pool_object, seen, pass_reading, stop);
}

// 1–3: the pool's finalizer, its claim on the backend, the finalizers of the master's Bindings.
Status PoolReconciler::actGuards(const policy::PoolPlan& plan, const Json& pool_object,
                                 const policy::PoolObservation& seen, std::stop_token stop) {
  const std::string& pool = seen.pool.metadata.name;
  if (plan.add_pool_finalizer) {
    // The pool as observed: one deleted meanwhile fails the patch, and the pass writes nothing.
    const kube::Api pools(config_.client, kube::resources::kvCachePools());
    KVC_RETURN_IF_ERROR(runtime::addFinalizer(pools, pool_object, api::pool::kFinalizer, stop));
  }
  if (plan.claim_backend) {
    KVC_RETURN_IF_ERROR(claimBackend(seen.pool.spec.backends.front(), pool, true, stop));
  }
  const kube::Api bindings(config_.client, kube::resources::kvCachePoolBindings());
  for (const std::string& key : plan.binding_finalizers) {
    runtime::ObjectPtr object = config_.bindings->get(key);
    if (!object) {
      continue;
    }
    Status added =
        unlessGone(runtime::addFinalizer(bindings.inNamespace(kube::object::namespaceName(*object)),
                                         *object, api::binding::kFinalizer, stop));
    if (!added.ok()) {
      return added.withContext("adding the finalizer of KVCachePoolBinding " + key);
    }
  }
  return okStatus();
}

// 4: the ledger's writes (if any), then the master as they left it: the ledger read back when
// anything was written, and the pass's one /metrics scrape.
void PoolReconciler::finishLedgerStage(const policy::PoolPlan& plan, store::AdminClient* master,
                                       policy::PoolObservation& seen) {
  policy::LedgerWrites writes;
  writes.before = seen.reading.tenants;
  if (master != nullptr) {
    internal::LedgerSession session(*master);
    writes.written = session.apply(plan.ledger, seen.reading);
    session.scrape(seen.reading);
  }
  seen.ledger_written = std::move(writes);
}

// 6: the seed of a managed master's policy file: what its ledger should hold. Not a write the
// statuses depend on, so a failure is logged and the pass goes on.
void PoolReconciler::applyTenantPolicy(const policy::PoolPlan& plan,
                                       const policy::PoolObservation& seen, std::stop_token stop) {
  const std::string& pool = seen.pool.metadata.name;
  const std::string backend = seen.backend ? seen.backend->metadata.name : std::string();
  if (plan.tenant_policy_error) {
    spdlog::warn("pool {}: the tenant-quota policy of backend {} is not rendered: {}", pool,
                 backend, *plan.tenant_policy_error);
    return;
  }
  if (!plan.tenant_policy) {
    return;
  }
  runtime::ObjectPtr backend_object = config_.backends->get(backend);
  if (!backend_object) {
    return;  // the owner the ConfigMap is written under is gone
  }
  // Forced: the whole document is the contract's (§3.4), and its first version was the backend
  // controller's seed (created, so another field manager's operation owns its data).
  runtime::OwnedSet set;
  set.children.push_back({kube::resources::configMaps(), *plan.tenant_policy, "tenant-quota-policy",
                          std::nullopt, /*force=*/true});
  if (config_.config_maps != nullptr) {
    set.sources.push_back(
        {kube::resources::configMaps(), config_.operator_namespace, config_.config_maps});
  }
  auto applied = owned_.apply(*backend_object, set, stop);
  if (!applied.ok()) {
    spdlog::warn("pool {}: the tenant-quota policy of backend {} was not written: {}", pool,
                 backend, applied.error().status().message());
  }
}

// 7: each Binding of the pool, in order: released (its finalizer removed), or its status
// written.
Status PoolReconciler::actBindings(const policy::PoolPlan& plan,
                                   const policy::PoolObservation& seen,
                                   const ReadingSource& pass_reading, std::stop_token stop) {
  const kube::Api bindings(config_.client, kube::resources::kvCachePoolBindings());
  for (const policy::PoolPlan::BindingStep& step : plan.bindings) {
    if (step.release) {
      runtime::ObjectPtr object = config_.bindings->get(step.key);
      if (!object) {
        continue;
      }
      Status removed = unlessGone(
          runtime::removeFinalizer(bindings.inNamespace(kube::object::namespaceName(*object)),
                                   *object, api::binding::kFinalizer, stop));
      if (!removed.ok()) {
        return removed.withContext("releasing KVCachePoolBinding " + step.key);
      }
      spdlog::info("pool {}: KVCachePoolBinding {} released (reuse domain \"{}\")",
                   seen.pool.metadata.name, step.key, step.domain);
      continue;
    }
    if (!step.status) {
      continue;
    }
    const policy::BindingStatusPlan& planned = *step.status;
    auto written = binding_status_.update(
        *config_.bindings, planned.key,
        [&](const Json& current) -> Result<Json> {
          if (kube::object::resourceVersion(current) ==
              planned.facts.binding.metadata.resource_version) {
            return api::bindingStatusToJson(planned.status);
          }
          // A newer object than the observed one (usedBy moved, a conflict): decided again from
          // it with the same facts.
          policy::BindingFacts facts = planned.facts;
          KVC_ASSIGN_OR_RETURN(facts.binding, api::bindingFromJson(current));
          return api::bindingStatusToJson(policy::bindingStatus(
              facts, pass_reading(), facts.binding.metadata.generation, seen.now));
        },
        stop);
    if (!written.ok()) {
      return written.status();
    }
    recordCacheUnused(planned, seen);
  }
  return okStatus();
}

// 8 and 9: the pool released (its backend claim, then its finalizer), or its status written;
// then the pass's outcome.
Result<runtime::Action> PoolReconciler::actPool(const policy::PoolPlan& plan,
                                                const Json& pool_object,
                                                const policy::PoolObservation& seen,
                                                const ReadingSource& pass_reading,
                                                std::stop_token stop) {
  const KVCachePool& pool = seen.pool;
  if (plan.release_pool) {
    if (seen.backend) {
      KVC_RETURN_IF_ERROR(
          claimBackend(seen.backend->metadata.name, pool.metadata.name, false, stop));
    }
    if (api::hasFinalizer(pool.metadata, api::pool::kFinalizer)) {
      const kube::Api pools(config_.client, kube::resources::kvCachePools());
      runtime::ObjectPtr latest = config_.pools->get(pool.metadata.name);
      Status removed = unlessGone(runtime::removeFinalizer(pools, latest ? *latest : pool_object,
                                                           api::pool::kFinalizer, stop));
      if (!removed.ok()) {
        return removed.withContext("releasing KVCachePool " + pool.metadata.name);
      }
      spdlog::info("pool {}: released", pool.metadata.name);
    }
    return runtime::Action::done();
  }
  if (plan.pool_status) {
    const policy::PoolStatusPlan& planned = *plan.pool_status;
    auto written = pool_status_.update(
        *config_.pools, pool.metadata.name,
        [&](const Json& current) -> Result<Json> {
          if (kube::object::resourceVersion(current) ==
              planned.facts.pool.metadata.resource_version) {
            return api::poolStatusToJson(planned.status);
          }
          policy::PoolFacts facts = planned.facts;
          KVC_ASSIGN_OR_RETURN(facts.pool, api::poolFromJson(current));
          return api::poolStatusToJson(
              policy::poolStatus(facts, pass_reading(), facts.pool.metadata.generation, seen.now));
        },
        stop);
    if (!written.ok()) {
      return written.status();
    }
  }
  if (plan.store_failure) {
    // Reported in the statuses; retried with backoff (capped at the resync).
    return unavailable("the master of KVCacheBackend " + seen.pool.spec.backends.front() + " at " +
                       seen.reading.admin_address + ": " + *plan.store_failure);
  }
  return runtime::Action::requeueAfter(
      std::chrono::duration_cast<Clock::Duration>(plan.requeue_after));
}

Status PoolReconciler::claimBackend(const std::string& backend_name, const std::string& pool,
                                    bool held, std::stop_token stop) {
  const api::ObjectReference claim{std::string(api::kKindPool), "", pool};
  auto written = backend_status_.update(
      *config_.backends, backend_name,
      [&](const Json& current) -> Result<Json> {
        KVC_ASSIGN_OR_RETURN(KVCacheBackend backend, api::backendFromJson(current));
        auto& list = backend.status.used_by;
        const bool present = std::find(list.begin(), list.end(), claim) != list.end();
        if (held && !present) {
          list.push_back(claim);
          std::sort(list.begin(), list.end());
        } else if (!held && present) {
          std::erase(list, claim);
        }
        return keptGenerationStatus(current, backend.status);
      },
      stop);
  return written.ok() ? okStatus() : written.status();
}

}  // namespace kvc::controllers
