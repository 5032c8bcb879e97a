#include "kvc/policy/quota/pool_status.h"

#include <algorithm>
#include <limits>
#include <map>

#include "kvc/api/message.h"
#include "kvc/api/phase.h"
#include "kvc/api/pool_conditions.h"
#include "kvc/common/quantity.h"
#include "kvc/policy/base/text.h"

namespace kvc::policy {
namespace {

namespace p = api::pool;
using api::Condition;
using api::makeCondition;

// a + b, held at 2^63-1 (ceilings may each be that large).
std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::int64_t>::max() : sum;
}

bool contested(const PoolFacts& facts, const std::string& domain) {
  return std::find(facts.contested_domains.begin(), facts.contested_domains.end(), domain) !=
         facts.contested_domains.end();
}

Condition backendResolved(const PoolFacts& facts) {
  switch (facts.resolution) {
    case BackendResolution::NotSingular:
      return makeCondition(p::kBackendResolved, api::kConditionFalse, p::kReasonBackendNotSingular,
                           "spec.backends names " +
                               std::to_string(facts.pool.spec.backends.size()) +
                               " backends; a pool draws on exactly one. Fix: create a pool that "
                               "names one KVCacheBackend");
    case BackendResolution::NotFound:
      return makeCondition(p::kBackendResolved, api::kConditionFalse, p::kReasonBackendNotFound,
                           "KVCacheBackend " + inQuotes(facts.backend) +
                               " does not exist. Fix: create it (spec.backends cannot be "
                               "re-pointed)");
    case BackendResolution::EndpointsNotPublished:
      return makeCondition(p::kBackendResolved, api::kConditionFalse,
                           p::kReasonEndpointsNotPublished,
                           "KVCacheBackend " + inQuotes(facts.backend) +
                               " has not published its Admin endpoint yet (status.endpoints); "
                               "checked again in 30 s");
    case BackendResolution::Resolved:
      break;
  }
  return makeCondition(
      p::kBackendResolved, api::kConditionTrue, p::kReasonResolved,
      "KVCacheBackend " + inQuotes(facts.backend) + " serves clients at " + facts.client_endpoint);
}

// usedBy: every Binding that names the pool, sorted.
std::vector<api::ObjectReference> usedBy(const PoolFacts& facts) {
  std::vector<api::ObjectReference> used_by;
  for (const api::KVCachePoolBinding& binding : facts.bindings) {
    used_by.push_back(
        {std::string(api::kKindBinding), binding.metadata.namespace_name, binding.metadata.name});
  }
  std::sort(used_by.begin(), used_by.end());
  return used_by;
}

// QuotaWithinTotal; nullopt when quota.total does not parse (admission refuses it anyway).
std::optional<Condition> quotaWithinTotal(const PoolFacts& facts) {
  auto total = parseQuantityBytes(facts.pool.spec.quota_total);
  if (!total.ok()) {
    return std::nullopt;
  }
  const std::int64_t sum = countedCeilings(facts);
  if (sum <= *total) {
    return makeCondition(p::kQuotaWithinTotal, api::kConditionTrue, p::kReasonWithinTotal,
                         "the Bindings' ceilings sum to " + bytesText(sum) +
                             ", within quota.total " + bytesText(*total));
  }
  return makeCondition(
      p::kQuotaWithinTotal, api::kConditionFalse, p::kReasonOversubscribed,
      "the Bindings' ceilings sum to " + bytesText(sum) + ", past quota.total " +
          bytesText(*total) +
          ". This is a report, not a refusal: nothing is refused, and the store recuts "
          "every grant in proportion to its ceiling (see each Binding's "
          "status.effectiveQuota). Lower a ceiling or raise quota.total for full grants");
}

// The ledger's two conditions (a resolved backend only): QuotaLedgerAvailable says whether the
// master's tenant ledger could be used at all, QuotaPolicyWritable whether this pass's writes
// to it were saved. Whatever makes the ledger unavailable leaves the second Unknown.
Condition quotaLedgerAvailable(const PoolFacts& facts, const MasterReading& reading) {
  switch (reading.ledger) {
    case LedgerState::NoLedger: {
      const std::string why =
          reading.declared_single_tenant
              ? "KVCacheBackend " + inQuotes(facts.backend) + " declares leader.multiTenancy: false"
              : "the master at " + reading.admin_address +
                    " runs without multi-tenancy (409 UNAVAILABLE_IN_CURRENT_MODE)";
      return makeCondition(
          p::kQuotaLedgerAvailable, api::kConditionFalse, p::kReasonMultiTenancyDisabled,
          why +
              ", so it keeps no per-tenant quota ledger: ceilings are not enforced and every "
              "write lands in the store's default tenant");
    }
    case LedgerState::Unreachable:
      break;
    case LedgerState::Read:
      if (reading.ledger_error.empty()) {
        return makeCondition(
            p::kQuotaLedgerAvailable, api::kConditionTrue, p::kReasonAvailable,
            "the tenant ledger of " + reading.admin_address + " is readable and writable");
      }
      break;
  }
  return makeCondition(p::kQuotaLedgerAvailable, api::kConditionFalse, p::kReasonLedgerUnreachable,
                       api::boundDetail(reading.ledger_error));
}

Condition quotaPolicyWritable(const PoolFacts& facts, const MasterReading& reading) {
  switch (reading.ledger) {
    case LedgerState::NoLedger:
      return makeCondition(p::kQuotaPolicyWritable, api::kConditionUnknown,
                           p::kReasonMultiTenancyDisabled, "there is no tenant ledger to write");
    case LedgerState::Unreachable:
      return makeCondition(
          p::kQuotaPolicyWritable, api::kConditionUnknown, p::kReasonLedgerUnreachable,
          "the tenant ledger of " + reading.admin_address + " could not be reached");
    case LedgerState::Read:
      break;
  }
  if (!reading.ledger_error.empty()) {
    return makeCondition(p::kQuotaPolicyWritable, api::kConditionUnknown,
                         p::kReasonLedgerUnreachable,
                         "a request to the tenant ledger of " + reading.admin_address + " failed");
  }
  if (!reading.persist_error.empty()) {
    return makeCondition(p::kQuotaPolicyWritable, api::kConditionFalse,
                         p::kReasonQuotaPolicyNotWritable,
                         "the master could not save its tenant-quota policy, so the change was not "
                         "applied (500 PERSISTENT_FAIL): " +
                             api::boundDetail(reading.persist_error) +
                             ". The master's policy directory must be writable; it is retried with "
                             "backoff");
  }
  return makeCondition(p::kQuotaPolicyWritable, api::kConditionTrue, p::kReasonWritable,
                       "the ledger holds every reuse domain asked for on "
                       "KVCacheBackend " +
                           inQuotes(facts.backend));
}

// CapacityAllocatable (a resolved backend only): what the master can hand out, from the ledger's
// allocatable gauge, or from the mounted total when there is no ledger to recut it.
Condition capacityAllocatable(const MasterReading& reading) {
  const bool no_ledger = reading.ledger == LedgerState::NoLedger;
  const std::optional<std::int64_t> gauge =
      no_ledger ? reading.total_capacity_bytes : reading.allocatable_bytes;
  if (!reading.scraped || !gauge) {
    return makeCondition(
        p::kCapacityAllocatable, api::kConditionFalse, p::kReasonCapacityNotObserved,
        !reading.scraped
            ? "the master's metrics could not be read: " + api::boundDetail(reading.scrape_error)
            : "the master's metrics do not export " +
                  std::string(no_ledger ? "master_total_capacity_bytes"
                                        : "mooncake_tenant_quota_allocatable_capacity_bytes"));
  }
  if (*gauge == 0) {
    return makeCondition(
        p::kCapacityAllocatable, api::kConditionFalse, p::kReasonNothingToAllocate,
        "the master has no capacity to allocate: no member has mounted a segment yet (a "
        "restarted master can take about 30 s to remount), so every grant is 0");
  }
  return makeCondition(p::kCapacityAllocatable, api::kConditionTrue, p::kReasonAllocatable,
                       no_ledger ? "the master has " + bytesText(*gauge) +
                                       " of mounted capacity, which bounds every write alike"
                                 : "the master can allocate " + bytesText(*gauge) +
                                       ", recut among the domains in proportion to their ceilings");
}

// domains[] from a ledger that was read: what it holds for this pool's uncontested Bindings (so
// it is also the memory of what this operator registered), one entry a domain (the list is keyed
// by name: the API server refuses a duplicate), sorted by name. A domain claimed by a live Binding
// and by a deleting one still held (the fix of a contested domain: one of the two deleted) names
// the live one, which keeps it.
std::vector<api::PoolDomain> ledgerDomains(const PoolFacts& facts, const MasterReading& reading) {
  std::map<std::string, api::PoolDomain> by_name;
  for (const bool deleting : {false, true}) {  // a live claim before a deleting one
    for (const api::KVCachePoolBinding& binding : facts.bindings) {
      const std::string& name = binding.spec.domain.name;
      if (binding.metadata.deleting != deleting || contested(facts, name) ||
          !reading.inLedger(name) || by_name.contains(name)) {
        continue;
      }
      api::PoolDomain& domain = by_name[name];
      domain.name = name;
      domain.binding_namespace = binding.metadata.namespace_name;
      domain.binding_name = binding.metadata.name;
      domain.block_size = binding.spec.domain.block_size;
      domain.dtype = binding.spec.domain.dtype;
      domain.hit_rate = binding.status.hit_rate;
    }
  }
  std::vector<api::PoolDomain> domains;
  for (auto& [name, domain] : by_name) {
    domains.push_back(std::move(domain));
  }
  return domains;
}

// domains[] this pass: re-read from a ledger that was read; none without a resolved backend or
// a ledger; kept as it was when the ledger could not be read (it is what must be released).
std::vector<api::PoolDomain> poolDomains(const PoolFacts& facts, const MasterReading& reading,
                                         std::vector<api::PoolDomain> previous) {
  const bool resolved = facts.resolution == BackendResolution::Resolved;
  if (!resolved || reading.ledger == LedgerState::NoLedger) {
    return {};
  }
  if (reading.ledger == LedgerState::Read) {
    return ledgerDomains(facts, reading);
  }
  return previous;
}

// usage.total: Σ occupancy of `domains` in this pass's scrape; absent without a resolved
// backend, without a scrape, or when the scrape has no occupancy for any of them.
std::optional<std::int64_t> usageTotal(const PoolFacts& facts, const MasterReading& reading,
                                       const std::vector<api::PoolDomain>& domains) {
  if (facts.resolution != BackendResolution::Resolved || !reading.scraped) {
    return std::nullopt;
  }
  std::int64_t usage = 0;
  bool any_usage = false;
  for (const api::PoolDomain& domain : domains) {
    auto figures = reading.tenant_figures.find(domain.name);
    if (figures != reading.tenant_figures.end() && figures->second.occupancy_bytes) {
      usage = saturatingAdd(usage, *figures->second.occupancy_bytes);
      any_usage = true;
    }
  }
  return any_usage ? std::optional<std::int64_t>(usage) : std::nullopt;
}

// Releasable (while deleting): False while Bindings still name the pool, then while the ledger
// still holds a domain of `domains`; nullopt (absent) once nothing holds the pool.
std::optional<Condition> releasable(const PoolFacts& facts, const MasterReading& reading,
                                    const std::vector<api::PoolDomain>& domains) {
  if (!facts.holding_bindings.empty()) {
    return makeCondition(
        p::kReleasable, api::kConditionFalse, p::kReasonHeldByBindings,
        "KVCachePool " + inQuotes(facts.pool.metadata.name) +
            " is still named by "
            "KVCachePoolBinding " +
            api::nameList(facts.holding_bindings) +
            ". Fix: delete those Bindings first; their reuse domains are released, then the "
            "pool");
  }
  if (domains.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> left;
  for (const api::PoolDomain& domain : domains) {
    left.push_back(domain.name);
  }
  return makeCondition(
      p::kReleasable, api::kConditionFalse, p::kReasonLedgerNotReleased,
      "the ledger still holds reuse domain " + api::nameList(left) +
          " registered for this "
          "pool: " +
          (reading.ledger_error.empty() ? std::string("its removal is retried")
                                        : api::boundDetail(reading.ledger_error)) +
          ". It is retried every 30 s; removing the finalizer by hand is the escape");
}

// Every condition this pass decides, in the order they are set (a condition new to the status
// is appended in this order).
std::vector<Condition> desiredConditions(const PoolFacts& facts, const MasterReading& reading,
                                         const std::vector<api::PoolDomain>& domains) {
  std::vector<Condition> desired;
  desired.push_back(backendResolved(facts));
  if (auto within = quotaWithinTotal(facts)) {
    desired.push_back(std::move(*within));
  }
  if (facts.resolution == BackendResolution::Resolved) {
    desired.push_back(quotaLedgerAvailable(facts, reading));
    desired.push_back(quotaPolicyWritable(facts, reading));
    desired.push_back(capacityAllocatable(reading));
  }
  if (facts.pool.metadata.deleting) {
    if (auto release = releasable(facts, reading, domains)) {
      desired.push_back(std::move(*release));
    }
  }
  return desired;
}

// The phase over the four axes (contract §4), from the conditions already set: Deleting, with
// Releasable's message; Error on the first axis that is not True (a single-tenant master's
// MultiTenancyDisabled excepted); Provisioning while an axis has not been observed; Ready.
void setPhase(api::KVCachePool::Status& status, const PoolFacts& facts) {
  status.phase_message.clear();
  if (facts.pool.metadata.deleting) {
    status.phase = std::string(api::kPhaseDeleting);
    const Condition* releasable = api::findCondition(status.conditions, p::kReleasable);
    status.phase_message = releasable != nullptr
                               ? releasable->message
                               : "nothing holds the pool any more: it is being released";
    return;
  }
  for (std::string_view axis : {p::kBackendResolved, p::kQuotaLedgerAvailable,
                                p::kQuotaPolicyWritable, p::kCapacityAllocatable}) {
    const Condition* condition = api::findCondition(status.conditions, axis);
    if (condition != nullptr && condition->status != api::kConditionTrue &&
        condition->reason != p::kReasonMultiTenancyDisabled) {
      status.phase = std::string(api::kPhaseError);
      status.phase_message = condition->message;
      return;
    }
  }
  for (std::string_view axis : {p::kBackendResolved, p::kQuotaLedgerAvailable,
                                p::kQuotaPolicyWritable, p::kCapacityAllocatable}) {
    if (api::findCondition(status.conditions, axis) == nullptr) {
      status.phase = std::string(api::kPhaseProvisioning);
      status.phase_message = std::string(axis) + " has not been observed yet";
      return;
    }
  }
  status.phase = std::string(api::kPhaseReady);
  const Condition* ledger = api::findCondition(status.conditions, p::kQuotaLedgerAvailable);
  status.phase_message =
      ledger->reason == p::kReasonMultiTenancyDisabled
          ? "a single-tenant pool: the master keeps no ledger, so it serves exactly one domain "
            "and enforces no ceiling"
          : "the ledger holds every quota asked for";
}

}  // namespace

std::int64_t countedCeilings(const PoolFacts& facts) {
  std::int64_t sum = 0;
  for (const api::KVCachePoolBinding& binding : facts.bindings) {
    if (binding.metadata.deleting || binding.spec.domain.name.empty() ||
        contested(facts, binding.spec.domain.name)) {
      continue;
    }
    auto bytes = parseQuantityBytes(binding.spec.quota_ceiling);
    if (bytes.ok()) {
      sum = saturatingAdd(sum, *bytes);
    }
  }
  return sum;
}

api::KVCachePool::Status poolStatus(const PoolFacts& facts, const MasterReading& reading,
                                    std::int64_t generation, std::string_view now) {
  api::KVCachePool::Status status = facts.pool.status;
  const bool resolved = facts.resolution == BackendResolution::Resolved;
  status.client_endpoint = resolved ? facts.client_endpoint : std::string();
  status.used_by = usedBy(facts);
  // domains[] first: Releasable names what of it the ledger still holds.
  status.domains = poolDomains(facts, reading, std::move(status.domains));
  status.usage_total = usageTotal(facts, reading, status.domains);

  const std::vector<std::string_view> owned = {p::kBackendResolved,     p::kQuotaLedgerAvailable,
                                               p::kQuotaPolicyWritable, p::kQuotaWithinTotal,
                                               p::kCapacityAllocatable, p::kReleasable};
  api::setConditions(status.conditions, desiredConditions(facts, reading, status.domains), owned,
                     generation, now);
  setPhase(status, facts);
  return status;
}

}  // namespace kvc::policy
