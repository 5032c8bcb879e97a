#include "kvc/policy/quota/pool_plan.h"

#include <algorithm>
#include <set>

#include "kvc/api/binding_conditions.h"
#include "kvc/api/pool_conditions.h"
#include "kvc/common/quantity.h"
#include "kvc/policy/quota/tenant_quota_policy.h"

namespace kvc::policy {
namespace {

using api::KVCachePool;
using api::KVCachePoolBinding;

std::string keyOf(const KVCachePoolBinding& binding) {
  return binding.metadata.namespace_name + "/" + binding.metadata.name;
}

const BindingHold& holdOf(const PoolObservation& seen, const std::string& key) {
  static const BindingHold kNone;
  auto it = seen.holds.find(key);
  return it == seen.holds.end() ? kNone : it->second;
}

// Every live or deleting Binding of the master claims its domain (pools naming one backend only).
std::vector<DomainClaim> masterClaims(const PoolObservation& seen) {
  std::vector<DomainClaim> claims;
  claims.reserve(seen.master_bindings.size());
  for (const auto& binding : seen.master_bindings) {
    auto ceiling = parseQuantityBytes(binding->spec.quota_ceiling);
    claims.push_back({binding->spec.domain.name, binding->metadata.namespace_name,
                      binding->metadata.name, binding->spec.pool_ref, ceiling.ok() ? *ceiling : 0,
                      binding->metadata.deleting});
  }
  return claims;
}

// The domains whose release is due: every deleting Binding claiming one is free (nothing holds
// it and its admission window has passed).
std::set<std::string> releasableDomains(const PoolObservation& seen) {
  std::set<std::string> releasable;
  std::set<std::string> held;
  for (const auto& binding : seen.master_bindings) {
    if (!binding->metadata.deleting) {
      continue;
    }
    const BindingHold& hold = holdOf(seen, keyOf(*binding));
    if (hold.holders.empty() && !hold.window_left_seconds) {
      releasable.insert(binding->spec.domain.name);
    } else {
      held.insert(binding->spec.domain.name);
    }
  }
  for (const std::string& domain : held) {
    releasable.erase(domain);
  }
  return releasable;
}

// The domains this operator registered on the master: every pool's status.domains, and the
// domain of every deleting Binding it still holds a finalizer on.
std::set<std::string> registeredDomains(const PoolObservation& seen) {
  std::set<std::string> registered;
  for (const auto& sibling : seen.siblings) {
    for (const api::PoolDomain& domain : sibling->status.domains) {
      registered.insert(domain.name);
    }
  }
  for (const auto& binding : seen.master_bindings) {
    if (binding->metadata.deleting &&
        api::hasFinalizer(binding->metadata, api::binding::kFinalizer)) {
      registered.insert(binding->spec.domain.name);
    }
  }
  return registered;
}

// The master's first failure this pass, as the pool controller reports it (nullopt: none).
std::optional<std::string> storeFailure(const MasterReading& r) {
  if (!r.ledger_error.empty()) {
    return r.ledger_error;
  }
  if (!r.persist_error.empty()) {
    return r.persist_error;
  }
  if (!r.retained.empty()) {
    return "the master keeps reuse domain \"" + r.retained.front() +
           "\": it still holds objects (TENANT_NOT_EMPTY)";
  }
  if (!r.removal_errors.empty()) {
    return r.removal_errors.begin()->second;
  }
  if (r.ledger == LedgerState::Unreachable || !r.scraped) {
    return r.scrape_error;
  }
  return std::nullopt;
}

// The tenants a managed master's policy file seeds (contract §3.4: every non-contested domain of
// every Binding on the master, with its ceiling): every desired domain; a deleting Binding's
// domain until its release has removed it from the ledger (a master restarted inside the
// admission window, or while a workload holds the Binding, must still know the tenant); and the
// explicit entries the ledger keeps that are not ours to drop (retained: TENANT_NOT_EMPTY;
// contested), with what they requested.
std::vector<TenantPolicy> seededTenants(const std::vector<DomainClaim>& claims,
                                        const DesiredLedger& desired,
                                        const MasterReading& reading) {
  std::vector<TenantPolicy> tenants;
  std::set<std::string> seeded;
  for (const auto& [domain, bytes] : desired.tenants) {
    tenants.push_back({domain, bytes});
    seeded.insert(domain);
  }
  for (const DomainClaim& claim : claims) {
    const bool released = reading.ledger == LedgerState::Read && !reading.inLedger(claim.domain);
    if (claim.deleting && desired.releasing.count(claim.domain) > 0 && !released &&
        claim.ceiling_bytes > 0 && seeded.insert(claim.domain).second) {
      tenants.push_back({claim.domain, claim.ceiling_bytes});
    }
  }
  std::set<std::string> kept(reading.retained.begin(), reading.retained.end());
  for (const auto& [domain, claimants] : desired.contested) {
    kept.insert(domain);
  }
  for (const ObservedTenant& tenant : reading.tenants) {
    if (kept.count(tenant.tenant_id) > 0 && tenant.has_explicit_policy &&
        seeded.insert(tenant.tenant_id).second) {
      tenants.push_back({tenant.tenant_id, tenant.requested_bytes});
    }
  }
  return tenants;  // rendered sorted by name
}

// The facts of one Binding of this pool.
BindingFacts bindingFacts(const PoolObservation& seen, const PoolBackend& backend,
                          const DesiredLedger& desired, const KVCachePoolBinding& binding) {
  const std::string key = keyOf(binding);
  BindingFacts facts;
  facts.binding = binding;
  facts.backend = backend.name;
  if (auto it = desired.contested.find(binding.spec.domain.name); it != desired.contested.end()) {
    for (const std::string& claimant : it->second) {
      if (claimant != key) {
        facts.contested_with.push_back(claimant);
      }
    }
  } else if (binding.metadata.deleting && desired.tenants.count(binding.spec.domain.name) > 0) {
    facts.domain_claimed_elsewhere = true;  // a live Binding on the master claims it now
  }
  const BindingHold& hold = holdOf(seen, key);
  facts.holders = hold.holders;
  facts.gone_users = hold.gone_users;
  facts.admission_window_closes = hold.window_closes;
  if (auto use = seen.uses.find(key); use != seen.uses.end()) {
    facts.use = use->second;
  }
  facts.nothing_owed =
      !backend.resolved() && backend.resolution != BackendResolution::EndpointsNotPublished;
  return facts;
}

// 1–3: what guards the pass's writes, before any of them.
void planGuards(const PoolObservation& seen, PoolPlan& plan) {
  const KVCachePool& pool = seen.pool;
  plan.add_pool_finalizer =
      !pool.metadata.deleting && !api::hasFinalizer(pool.metadata, api::pool::kFinalizer);
  if (seen.backend && !pool.metadata.deleting) {
    const api::ObjectReference claim{std::string(api::kKindPool), "", pool.metadata.name};
    const auto& used_by = seen.backend->status.used_by;
    plan.claim_backend = std::find(used_by.begin(), used_by.end(), claim) == used_by.end();
  }
  for (const auto& binding : seen.master_bindings) {
    if (!binding->metadata.deleting &&
        !api::hasFinalizer(binding->metadata, api::binding::kFinalizer)) {
      plan.binding_finalizers.push_back(keyOf(*binding));
    }
  }
}

// 7: per Binding of this pool, its release or its status.
void planBindings(const PoolObservation& seen, const PoolBackend& backend,
                  const DesiredLedger& desired, const MasterReading& reading, PoolPlan& plan) {
  for (const KVCachePoolBinding& binding : seen.bindings) {
    const bool ours = api::hasFinalizer(binding.metadata, api::binding::kFinalizer);
    if (binding.metadata.deleting && !ours) {
      continue;  // not ours to hold: it goes as soon as the others let it
    }
    PoolPlan::BindingStep step;
    step.key = keyOf(binding);
    step.domain = binding.spec.domain.name;
    BindingFacts facts = bindingFacts(seen, backend, desired, binding);
    if (binding.metadata.deleting && bindingReleased(facts, reading)) {
      step.release = true;
    } else {
      api::KVCachePoolBinding::Status status =
          bindingStatus(facts, reading, binding.metadata.generation, seen.now);
      step.status = BindingStatusPlan{step.key, std::move(facts), std::move(status)};
    }
    plan.bindings.push_back(std::move(step));
  }
}

// 8: the pool's release or its status.
void planPoolItself(const PoolObservation& seen, const PoolBackend& backend,
                    const DesiredLedger& desired, const MasterReading& reading, PoolPlan& plan) {
  const KVCachePool& pool = seen.pool;
  PoolFacts facts;
  facts.pool = pool;
  facts.resolution = backend.resolution;
  facts.backend = backend.name;
  facts.client_endpoint = backend.client_endpoint;
  facts.bindings = seen.bindings;
  // The hit rate of a domain is its Binding's, as this pass decided it.
  std::map<std::string, std::optional<std::string>> hit_rates;
  for (const PoolPlan::BindingStep& step : plan.bindings) {
    if (step.status) {
      hit_rates[step.key] = step.status->status.hit_rate;
    }
  }
  for (KVCachePoolBinding& binding : facts.bindings) {
    if (auto it = hit_rates.find(keyOf(binding)); it != hit_rates.end()) {
      binding.status.hit_rate = it->second;
    }
  }
  for (const auto& [domain, claimants] : desired.contested) {
    facts.contested_domains.push_back(domain);
  }
  if (pool.metadata.deleting) {
    for (const KVCachePoolBinding& binding : seen.bindings) {
      facts.holding_bindings.push_back(keyOf(binding));
    }
    std::sort(facts.holding_bindings.begin(), facts.holding_bindings.end());
  }
  KVCachePool::Status status = poolStatus(facts, reading, pool.metadata.generation, seen.now);
  // A deleting pool that no Binding names, whose domains are all out of the ledger (or that
  // owes the ledger nothing: no backend, no ledger), is released; its status is not written.
  if (pool.metadata.deleting && seen.bindings.empty()) {
    const bool owes_nothing = !backend.resolved() || reading.ledger == LedgerState::NoLedger;
    if (owes_nothing || status.domains.empty()) {
      plan.release_pool = true;
      return;
    }
  }
  plan.pool_status = PoolStatusPlan{std::move(facts), std::move(status)};
}

// 9: when the pass is due again — the resync, or sooner when an admission window closes first.
std::chrono::nanoseconds requeueAfter(const PoolObservation& seen) {
  std::chrono::nanoseconds next = seen.resync;
  for (const auto& [key, hold] : seen.holds) {
    if (hold.window_left_seconds) {
      next =
          std::min<std::chrono::nanoseconds>(next, std::chrono::seconds(*hold.window_left_seconds));
    }
  }
  return next;
}

}  // namespace

PoolBackend poolBackend(const KVCachePool& pool,
                        const std::optional<api::KVCacheBackend>& backend) {
  PoolBackend out;
  if (pool.spec.backends.size() != 1 || pool.spec.backends.front().empty()) {
    out.resolution = BackendResolution::NotSingular;
    return out;
  }
  out.name = pool.spec.backends.front();
  if (!backend) {
    out.resolution = BackendResolution::NotFound;
    return out;
  }
  out.admin_address = api::endpointAddress(backend->status.endpoints, api::kEndpointAdmin);
  out.client_endpoint = api::endpointAddress(backend->status.endpoints, api::kEndpointClient);
  out.resolution = out.admin_address.empty() || out.client_endpoint.empty()
                       ? BackendResolution::EndpointsNotPublished
                       : BackendResolution::Resolved;
  return out;
}

PoolPlan planPool(const PoolObservation& seen) {
  PoolPlan plan;
  const PoolBackend backend = poolBackend(seen.pool, seen.backend);
  // The observed reading, or one that says why the master was not read (passReading); not
  // copied when it is the observed one (a thousand tenants and their figures).
  std::optional<MasterReading> unread;
  if (!backend.resolved()) {
    unread = passReading(seen);
  }
  const MasterReading& reading = unread ? *unread : seen.reading;
  if (!seen.ledger_written) {
    // The ledger stage: the guards, then the writes that bring the ledger to what is desired.
    planGuards(seen, plan);
    if (backend.resolved() && reading.ledger == LedgerState::Read &&
        !reading.declared_single_tenant) {
      plan.ledger = planLedger(desiredLedger(masterClaims(seen)), reading.tenants,
                               registeredDomains(seen), releasableDomains(seen));
    }
    return plan;
  }
  // The report stage.
  DesiredLedger desired;
  if (backend.resolved()) {
    const std::vector<DomainClaim> claims = masterClaims(seen);
    desired = desiredLedger(claims);
    // The other pools whose Bindings' grants moved are passed again now, not at their resync;
    // on a master that is not recutting, that is only the written domains' pools.
    const LedgerRipple ripple =
        ledgerRipple(claims, seen.ledger_written->written, seen.ledger_written->before,
                     reading.tenants, reading.ledger_error.empty());
    for (const std::string& pool : ripple.pools) {
      if (pool != seen.pool.metadata.name) {
        plan.ripple.push_back(pool);
      }
    }
    plan.store_failure = storeFailure(reading);
    if (seen.backend->spec.managed && seen.backend->spec.multi_tenancy) {
      auto rendered = tenantQuotaPolicyConfigMap(backend.name, seen.operator_namespace,
                                                 seededTenants(claims, desired, reading));
      if (rendered.ok()) {
        plan.tenant_policy = std::move(rendered).value();
      } else {
        plan.tenant_policy_error = rendered.status().message();
      }
    }
  }
  planBindings(seen, backend, desired, reading, plan);
  planPoolItself(seen, backend, desired, reading, plan);
  plan.requeue_after = requeueAfter(seen);
  return plan;
}

MasterReading passReading(const PoolObservation& seen) {
  MasterReading reading = seen.reading;
  if (!poolBackend(seen.pool, seen.backend).resolved()) {
    const std::string why = "the backend of KVCachePool \"" + seen.pool.metadata.name +
                            "\" is not resolved (see the pool's BackendResolved)";
    reading.ledger_error = why;
    reading.scrape_error = why;
  }
  return reading;
}

std::optional<std::int64_t> admissionWindowLeft(std::chrono::system_clock::duration elapsed,
                                                std::chrono::system_clock::duration window) {
  if (elapsed >= window) {
    return std::nullopt;
  }
  const auto left = std::chrono::duration_cast<std::chrono::seconds>(window - elapsed);
  return std::max<std::int64_t>(1, left.count() + 1);
}

}  // namespace kvc::policy
