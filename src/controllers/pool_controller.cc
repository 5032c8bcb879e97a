#include "kvc/controllers/pool_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "internal/master_reader.h"
#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/binding_conditions.h"
#include "kvc/api/model_deployment.h"
#include "kvc/api/pool.h"
#include "kvc/api/pool_conditions.h"
#include "kvc/controllers/indexes.h"
#include "kvc/common/quantity.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/policy/quota/binding_status.h"
#include "kvc/policy/inject/keys.h"
#include "kvc/policy/quota/pool_status.h"
#include "kvc/policy/quota/quota_ledger.h"
#include "kvc/policy/quota/tenant_quota_policy.h"
#include "kvc/runtime/field_manager.h"
#include "kvc/runtime/finalizer.h"
#include "kvc/runtime/rate_limiter.h"

namespace kvc::controllers {
namespace {

using api::KVCacheBackend;
using api::KVCachePool;
using api::KVCachePoolBinding;

std::string bindingKey(const KVCachePoolBinding& binding) {
  return binding.metadata.namespace_name + "/" + binding.metadata.name;
}

// Seconds of the admission window still to run for a Binding deleted at `deletion_timestamp`
// (nullopt once it has passed).
std::optional<std::int64_t> windowLeft(const std::string& deletion_timestamp,
                                       Clock::Duration window, Clock::WallTime now) {
  auto deleted = kube::parseTime(deletion_timestamp);
  if (!deleted.ok()) {
    return std::nullopt;
  }
  const auto elapsed = now - *deleted;
  if (elapsed >= window) {
    return std::nullopt;
  }
  const auto left = std::chrono::duration_cast<std::chrono::seconds>(window - elapsed);
  return std::max<std::int64_t>(1, left.count() + 1);
}

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

}  // namespace

std::unique_ptr<runtime::RateLimiter> poolRateLimiter(Clock::Duration cap, const Clock& clock) {
  std::vector<std::unique_ptr<runtime::RateLimiter>> limiters;
  limiters.push_back(std::make_unique<runtime::ItemExponentialFailureRateLimiter>(
      std::chrono::milliseconds(5), cap));
  limiters.push_back(std::make_unique<runtime::BucketRateLimiter>(10.0, 100, clock));
  return std::make_unique<runtime::MaxOfRateLimiter>(std::move(limiters));
}

// What one pass learned about the master, shared by the Binding and pool statuses.
struct PoolReconciler::Pass {
  std::string backend_name;
  std::optional<KVCacheBackend> backend;
  policy::BackendResolution resolution = policy::BackendResolution::NotFound;
  std::string admin_address;
  std::string client_endpoint;
  // Every pool on the master (this one included) and every Binding of those pools: shared with
  // the listers' memo, never copied.
  std::vector<runtime::Lister<KVCachePool>::Ptr> siblings;
  std::vector<runtime::Lister<KVCachePoolBinding>::Ptr> master_bindings;
  policy::DesiredLedger desired;
  policy::MasterReading reading;
  bool store_failed = false;
  std::string store_failure;
  std::optional<std::int64_t> next_window;  // the soonest admission window to close
  std::map<std::string, std::vector<std::string>> holders;  // deleting Binding -> holders
  // deleting Binding -> its usedBy ModelDeployments that no longer exist
  std::map<std::string, std::vector<std::string>> gone_users;
  std::map<std::string, std::int64_t> windows;              // deleting Binding -> seconds left
  std::set<std::string> releasable;                         // domains whose release is due
};

Result<bool> PoolReconciler::modelDeploymentExists(const std::string& ns, const std::string& name,
                                                   std::stop_token stop) {
  if (config_.model_deployments != nullptr &&
      config_.model_deployments->get(kube::object::key(ns, name))) {
    return true;
  }
  // The cache may lag a deployment created a moment ago, or not hold it at all (a selector):
  // only a live NotFound says it is gone.
  const kube::Api deployments(config_.client, kube::resources::modelDeployments(), ns);
  auto live = deployments.getOptional(name, stop);
  if (!live.ok()) {
    return live.status().withContext("reading ModelDeployment " + kube::object::key(ns, name));
  }
  return live->has_value();
}

// What still references a deleting Binding (its usedBy, the labelled Pods naming it), and how
// long its admission window has to run. Once the window has passed and the cache shows no Pod,
// a fresh list of the namespace's labelled Pods decides.
Status PoolReconciler::noteHolders(const KVCachePoolBinding& binding, Pass& pass,
                                   Clock::WallTime wall, std::stop_token stop) {
  const std::string key = bindingKey(binding);
  if (pass.holders.count(key) > 0) {
    return okStatus();
  }
  std::vector<std::string> holders;
  for (const api::ObjectReference& user : binding.status.used_by) {
    if (user.kind == api::kKindModelDeployment) {
      // Its controller removes the entry before the deployment goes; an entry left behind means
      // its finalizer was taken off by hand, and nothing holds the Binding any more.
      KVC_ASSIGN_OR_RETURN(bool exists,
                           modelDeploymentExists(binding.metadata.namespace_name, user.name, stop));
      if (!exists) {
        pass.gone_users[key].push_back(user.name);
        continue;
      }
    }
    holders.push_back(user.kind + "/" + user.name);
  }
  for (const runtime::ObjectPtr& pod : config_.pods->byIndex(kPodsByBinding, key)) {
    if (podActive(*pod)) {
      holders.push_back("Pod/" + kube::object::name(*pod));
    }
  }
  auto left = windowLeft(binding.metadata.deletion_timestamp, config_.admission_window, wall);
  if (holders.empty() && !left) {
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
        holders.push_back("Pod/" + kube::object::name(pod));
      }
    }
  }
  std::sort(holders.begin(), holders.end());
  holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
  if (left) {
    pass.windows[key] = *left;
    pass.next_window = std::min(pass.next_window.value_or(*left), *left);
  }
  pass.holders[key] = std::move(holders);
  return okStatus();
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
      bindings_(*config_.bindings, &api::bindingFromJson, std::string(api::kKindBinding)) {}

std::mutex& PoolReconciler::masterLock(const std::string& backend) {
  std::lock_guard<std::mutex> guard(locks_mutex_);
  auto& lock = locks_[backend];
  if (!lock) {
    lock = std::make_unique<std::mutex>();
  }
  return *lock;
}

Result<runtime::Action> PoolReconciler::reconcile(const runtime::Request& request,
                                                  std::stop_token stop) {
  runtime::ObjectPtr pool = config_.pools->get(request.name);
  if (!pool) {
    return releaseOrphans(request.name, stop);
  }
  const std::vector<std::string> backends = poolBackends(*pool);
  std::mutex& lock = masterLock(backends.size() == 1 ? backends.front() : "pool/" + request.name);
  std::lock_guard<std::mutex> guard(lock);
  return reconcilePool(*pool, stop);
}

// Bindings naming a pool that is gone: nothing is owed to any ledger, so a deleting one is let
// go; live ones wait for their pool to come back.
Result<runtime::Action> PoolReconciler::releaseOrphans(const std::string& pool,
                                                       std::stop_token stop) {
  kube::Api bindings(config_.client, kube::resources::kvCachePoolBindings());
  for (const runtime::ObjectPtr& object : config_.bindings->byIndex(kBindingsByPool, pool)) {
    if (kube::object::isDeleting(*object) &&
        runtime::hasFinalizer(*object, api::binding::kFinalizer)) {
      KVC_RETURN_IF_ERROR(runtime::removeFinalizer(
          bindings.inNamespace(kube::object::namespaceName(*object)), *object,
          api::binding::kFinalizer, stop));
    }
  }
  return runtime::Action::done();
}

Status PoolReconciler::claimBackend(const std::string& backend_name, const std::string& pool,
                                   bool held, std::stop_token stop) {
  const api::ObjectReference claim{std::string(api::kKindPool), "", pool};
  auto written = backend_status_.update(
      *config_.backends, backend_name, [&](const Json& current) -> Result<Json> {
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

Result<runtime::Action> PoolReconciler::releasePool(const KVCachePool& pool,
                                                    const Json& pool_object, const Pass& pass,
                                                    std::stop_token stop) {
  if (pass.backend) {
    KVC_RETURN_IF_ERROR(claimBackend(pass.backend_name, pool.metadata.name, false, stop));
  }
  if (api::hasFinalizer(pool.metadata, api::pool::kFinalizer)) {
    kube::Api pools_api(config_.client, kube::resources::kvCachePools());
    runtime::ObjectPtr latest = config_.pools->get(pool.metadata.name);
    Status removed = runtime::removeFinalizer(pools_api, latest ? *latest : pool_object,
                                              api::pool::kFinalizer, stop);
    if (!removed.ok() && removed.code() != StatusCode::NotFound) {
      return removed.withContext("releasing KVCachePool " + pool.metadata.name);
    }
    spdlog::info("pool {}: released", pool.metadata.name);
  }
  return runtime::Action::done();
}

Result<runtime::Action> PoolReconciler::reconcilePool(const Json& pool_object,
                                                      std::stop_token stop) {
  KVC_ASSIGN_OR_RETURN(KVCachePool pool, api::poolFromJson(pool_object));
  const Clock::WallTime wall = config_.clock->wallNow();
  const std::string now = kube::formatTime(wall);
  kube::Api pools_api(config_.client, kube::resources::kvCachePools());
  kube::Api bindings_api(config_.client, kube::resources::kvCachePoolBindings());
  kube::Api backends_api(config_.client, kube::resources::kvCacheBackends());

  // 1. The pool's own finalizer, before anything it guards is written.
  if (!pool.metadata.deleting && !api::hasFinalizer(pool.metadata, api::pool::kFinalizer)) {
    KVC_RETURN_IF_ERROR(
        runtime::addFinalizer(pools_api, pool_object, api::pool::kFinalizer, stop));
  }

  Pass pass;
  std::vector<KVCachePoolBinding> own_bindings;
  for (const auto& binding : bindings_.byIndex(kBindingsByPool, pool.metadata.name)) {
    own_bindings.push_back(*binding);
  }
  if (pool.spec.backends.size() != 1 || pool.spec.backends.front().empty()) {
    pass.resolution = policy::BackendResolution::NotSingular;
  } else {
    pass.backend_name = pool.spec.backends.front();
    if (runtime::ObjectPtr cached = config_.backends->get(pass.backend_name)) {
      auto decoded = api::backendFromJson(*cached);
      if (decoded.ok()) {
        pass.backend = std::move(decoded).value();
      }
    } else {
      // The cache may lag a backend created a moment ago: only a live NotFound is "missing".
      auto live = backends_api.getOptional(pass.backend_name, stop);
      if (!live.ok()) {
        return live.status().withContext("reading KVCacheBackend " + pass.backend_name);
      }
      if (live->has_value()) {
        auto decoded = api::backendFromJson(**live);
        if (decoded.ok()) {
          pass.backend = std::move(decoded).value();
        }
      }
    }
    if (!pass.backend) {
      pass.resolution = policy::BackendResolution::NotFound;
    } else {
      pass.admin_address = api::endpointAddress(pass.backend->status.endpoints, api::kEndpointAdmin);
      pass.client_endpoint =
          api::endpointAddress(pass.backend->status.endpoints, api::kEndpointClient);
      pass.resolution = pass.admin_address.empty() || pass.client_endpoint.empty()
                            ? policy::BackendResolution::EndpointsNotPublished
                            : policy::BackendResolution::Resolved;
    }
  }
  const bool resolved = pass.resolution == policy::BackendResolution::Resolved;
  if (!resolved) {
    const std::string why = "the backend of KVCachePool \"" + pool.metadata.name +
                            "\" is not resolved (see the pool's BackendResolved)";
    pass.reading.ledger_error = why;
    pass.reading.scrape_error = why;
  }

  // Claim the backend, so that it is not deleted under the pool.
  if (pass.backend && !pool.metadata.deleting) {
    const api::ObjectReference claim{std::string(api::kKindPool), "", pool.metadata.name};
    const auto& used_by = pass.backend->status.used_by;
    if (std::find(used_by.begin(), used_by.end(), claim) == used_by.end()) {
      KVC_RETURN_IF_ERROR(claimBackend(pass.backend_name, pool.metadata.name, true, stop));
    }
  }

  if (resolved) {
    // 2. Every claim on the master.
    pass.siblings = pools_.byIndex(kPoolsByBackend, pass.backend_name);
    std::vector<policy::DomainClaim> claims;
    for (const auto& sibling : pass.siblings) {
      if (sibling->spec.backends.size() != 1) {
        continue;
      }
      for (auto& binding : bindings_.byIndex(kBindingsByPool, sibling->metadata.name)) {
        auto ceiling = parseQuantityBytes(binding->spec.quota_ceiling);
        claims.push_back({binding->spec.domain.name, binding->metadata.namespace_name,
                          binding->metadata.name, sibling->metadata.name,
                          ceiling.ok() ? *ceiling : 0, binding->metadata.deleting});
        pass.master_bindings.push_back(std::move(binding));
      }
    }
    pass.desired = policy::desiredLedger(claims);

    // 3. Finalizers on every live Binding of the master before any external write.
    for (const auto& master_binding : pass.master_bindings) {
      const KVCachePoolBinding& binding = *master_binding;
      if (binding.metadata.deleting || api::hasFinalizer(binding.metadata, api::binding::kFinalizer)) {
        continue;
      }
      runtime::ObjectPtr object = config_.bindings->get(bindingKey(binding));
      if (!object) {
        continue;
      }
      Status added = runtime::addFinalizer(bindings_api.inNamespace(binding.metadata.namespace_name),
                                           *object, api::binding::kFinalizer, stop);
      if (!added.ok() && added.code() != StatusCode::NotFound) {
        return added.withContext("adding the finalizer of KVCachePoolBinding " +
                                 bindingKey(binding));
      }
    }

    // Which deleting Bindings of the master are still held, and by what. A domain is due for
    // release only when every deleting Binding claiming it is free.
    std::set<std::string> held_domains;
    for (const auto& master_binding : pass.master_bindings) {
      const KVCachePoolBinding& binding = *master_binding;
      if (binding.metadata.deleting) {
        KVC_RETURN_IF_ERROR(noteHolders(binding, pass, wall, stop));
        if (pass.holders[bindingKey(binding)].empty() &&
            pass.windows.count(bindingKey(binding)) == 0) {
          pass.releasable.insert(binding.spec.domain.name);
        } else {
          held_domains.insert(binding.spec.domain.name);
        }
      }
    }
    for (const std::string& domain : held_domains) {
      pass.releasable.erase(domain);
    }

    // 4. and 5. The ledger, then the scrape.
    pass.reading.admin_address = pass.admin_address;
    if (pass.backend->spec.managed && !pass.backend->spec.multi_tenancy) {
      pass.reading.ledger = policy::LedgerState::NoLedger;
      pass.reading.declared_single_tenant = true;
    }
    auto client = config_.stores(pass.admin_address);
    if (!client.ok()) {
      pass.reading.ledger = policy::LedgerState::Unreachable;
      pass.reading.ledger_error = client.status().message();
      pass.reading.scrape_error = client.status().message();
    } else {
      internal::LedgerSession session(**client);
      if (!pass.reading.declared_single_tenant) {
        session.read(pass.reading);
        if (pass.reading.ledger == policy::LedgerState::Read) {
          std::set<std::string> registered;
          for (const auto& sibling : pass.siblings) {
            for (const api::PoolDomain& domain : sibling->status.domains) {
              registered.insert(domain.name);
            }
          }
          for (const auto& master_binding : pass.master_bindings) {
      const KVCachePoolBinding& binding = *master_binding;
            if (binding.metadata.deleting &&
                api::hasFinalizer(binding.metadata, api::binding::kFinalizer)) {
              registered.insert(binding.spec.domain.name);
            }
          }
          const policy::LedgerPlan plan = policy::planLedger(
              pass.desired, pass.reading.tenants, registered, pass.releasable);
          const std::vector<policy::ObservedTenant> before = pass.reading.tenants;
          const std::vector<std::string> written = session.apply(plan, pass.reading);
          // The other pools whose Bindings' grants moved are passed again now, not at their
          // resync; on a master that is not recutting, that is only the written domains' pools.
          const policy::LedgerRipple ripple = policy::ledgerRipple(
              claims, written, before, pass.reading.tenants, pass.reading.ledger_error.empty());
          if (config_.enqueue) {
            for (const std::string& sibling : ripple.pools) {
              if (sibling != pool.metadata.name) {
                config_.enqueue(sibling);
              }
            }
          }
        }
      }
      session.scrape(pass.reading);
    }
    const policy::MasterReading& r = pass.reading;
    if (r.ledger == policy::LedgerState::Unreachable || !r.ledger_error.empty() ||
        !r.persist_error.empty() || !r.retained.empty() || !r.removal_errors.empty() ||
        !r.scraped) {
      pass.store_failed = true;
      pass.store_failure = !r.ledger_error.empty()    ? r.ledger_error
                           : !r.persist_error.empty() ? r.persist_error
                           : !r.retained.empty()
                               ? "the master keeps reuse domain \"" + r.retained.front() +
                                     "\": it still holds objects (TENANT_NOT_EMPTY)"
                           : !r.removal_errors.empty() ? r.removal_errors.begin()->second
                                                       : r.scrape_error;
    }

    // 6. The seed of a managed master's policy file: what its ledger should hold.
    if (pass.backend->spec.managed && pass.backend->spec.multi_tenancy) {
      std::vector<policy::TenantPolicy> tenants;
      for (const auto& [domain, bytes] : pass.desired.tenants) {
        tenants.push_back({domain, bytes});
      }
      std::set<std::string> kept(r.retained.begin(), r.retained.end());
      for (const auto& [domain, claimants] : pass.desired.contested) {
        kept.insert(domain);
      }
      for (const policy::ObservedTenant& tenant : r.tenants) {
        if (kept.count(tenant.tenant_id) > 0 && tenant.has_explicit_policy &&
            pass.desired.tenants.count(tenant.tenant_id) == 0) {
          tenants.push_back({tenant.tenant_id, tenant.requested_bytes});
        }
      }
      auto rendered = policy::tenantQuotaPolicyConfigMap(pass.backend_name,
                                                         config_.operator_namespace, tenants);
      runtime::ObjectPtr backend_object = config_.backends->get(pass.backend_name);
      if (rendered.ok() && backend_object) {
        runtime::OwnedSet set;
        set.children.push_back({kube::resources::configMaps(), std::move(rendered).value(),
                                "tenant-quota-policy", std::nullopt, false});
        if (config_.config_maps != nullptr) {
          set.sources.push_back(
              {kube::resources::configMaps(), config_.operator_namespace, config_.config_maps});
        }
        auto applied = owned_.apply(*backend_object, set, stop);
        if (!applied.ok()) {
          spdlog::warn("pool {}: the tenant-quota policy of backend {} was not written: {}",
                       pool.metadata.name, pass.backend_name,
                       applied.error().status().message());
        }
      } else if (!rendered.ok()) {
        spdlog::warn("pool {}: the tenant-quota policy of backend {} is not rendered: {}",
                     pool.metadata.name, pass.backend_name, rendered.status().message());
      }
    }
  }

  // 7. The Bindings of this pool, then the pool.
  std::vector<std::string> contested_domains;
  for (const auto& [domain, claimants] : pass.desired.contested) {
    contested_domains.push_back(domain);
  }
  std::vector<std::string> holding;
  for (const KVCachePoolBinding& binding : own_bindings) {
    const std::string key = bindingKey(binding);
    holding.push_back(key);
    if (binding.metadata.deleting) {
      KVC_RETURN_IF_ERROR(noteHolders(binding, pass, wall, stop));  // whatever the backend
    }
    policy::BindingFacts facts;
    facts.backend = pass.backend_name;
    if (auto it = pass.desired.contested.find(binding.spec.domain.name);
        it != pass.desired.contested.end()) {
      for (const std::string& claimant : it->second) {
        if (claimant != key) {
          facts.contested_with.push_back(claimant);
        }
      }
    } else if (binding.metadata.deleting &&
               pass.desired.tenants.count(binding.spec.domain.name) > 0) {
      facts.domain_claimed_elsewhere = true;  // a live Binding on the master claims it now
    }
    facts.holders = pass.holders[key];
    facts.gone_users = pass.gone_users[key];
    if (auto it = pass.windows.find(key); it != pass.windows.end()) {
      if (auto deleted = kube::parseTime(binding.metadata.deletion_timestamp); deleted.ok()) {
        facts.admission_window_closes = kube::formatTime(
            *deleted + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                           config_.admission_window));
      }
    }
    facts.nothing_owed = !resolved && pass.resolution != policy::BackendResolution::EndpointsNotPublished;
    facts.binding = binding;
    if (binding.metadata.deleting &&
        api::hasFinalizer(binding.metadata, api::binding::kFinalizer) &&
        policy::bindingReleased(facts, pass.reading)) {
      runtime::ObjectPtr object = config_.bindings->get(key);
      if (object) {
        Status removed = runtime::removeFinalizer(
            bindings_api.inNamespace(binding.metadata.namespace_name), *object,
            api::binding::kFinalizer, stop);
        if (!removed.ok() && removed.code() != StatusCode::NotFound) {
          return removed.withContext("releasing KVCachePoolBinding " + key);
        }
        spdlog::info("pool {}: KVCachePoolBinding {} released (reuse domain \"{}\")",
                     pool.metadata.name, key, binding.spec.domain.name);
      }
      continue;
    }
    if (binding.metadata.deleting && !api::hasFinalizer(binding.metadata, api::binding::kFinalizer)) {
      continue;  // not ours to hold: it goes as soon as the others let it
    }
    auto written = binding_status_.update(
        *config_.bindings, key,
        [&](const Json& current) -> Result<Json> {
          KVC_ASSIGN_OR_RETURN(facts.binding, api::bindingFromJson(current));
          return api::bindingStatusToJson(
              policy::bindingStatus(facts, pass.reading, facts.binding.metadata.generation, now));
        },
        stop);
    if (!written.ok()) {
      return written.status();
    }
  }
  std::sort(holding.begin(), holding.end());

  policy::PoolFacts facts;
  facts.resolution = pass.resolution;
  facts.backend = pass.backend_name;
  facts.client_endpoint = pass.client_endpoint;
  facts.bindings = own_bindings;
  facts.contested_domains = contested_domains;
  if (pool.metadata.deleting) {
    facts.holding_bindings = holding;
  }
  // A deleting pool that no Binding names and whose domains are all out of the ledger (or that
  // owes the ledger nothing: no backend, no ledger) is released: its backend claim, then its
  // finalizer. Its status is not written any more.
  if (pool.metadata.deleting && holding.empty()) {
    facts.pool = pool;
    const KVCachePool::Status last =
        policy::poolStatus(facts, pass.reading, pool.metadata.generation, now);
    const bool owes_nothing = !resolved || pass.reading.ledger == policy::LedgerState::NoLedger;
    if (owes_nothing || last.domains.empty()) {
      return releasePool(pool, pool_object, pass, stop);
    }
  }
  auto written = pool_status_.update(
      *config_.pools, pool.metadata.name,
      [&](const Json& current) -> Result<Json> {
        KVC_ASSIGN_OR_RETURN(facts.pool, api::poolFromJson(current));
        return api::poolStatusToJson(
            policy::poolStatus(facts, pass.reading, facts.pool.metadata.generation, now));
      },
      stop);
  if (!written.ok()) {
    return written.status();
  }

  if (pass.store_failed) {
    // Reported in the statuses; retried with backoff (capped at the resync).
    return unavailable("the master of KVCacheBackend " + pass.backend_name + " at " +
                       pass.admin_address + ": " + pass.store_failure);
  }
  Clock::Duration next = config_.resync;
  if (pass.next_window) {
    next = std::min<Clock::Duration>(next, std::chrono::seconds(*pass.next_window));
  }
  return runtime::Action::requeueAfter(next);
}

}  // namespace kvc::controllers
