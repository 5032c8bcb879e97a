#include "kvc/policy/quota/binding_status.h"

#include <algorithm>

#include "kvc/api/binding_conditions.h"
#include "kvc/api/message.h"
#include "kvc/api/model_deployment.h"
#include "kvc/api/phase.h"
#include "kvc/common/quantity.h"
#include "kvc/policy/base/text.h"

namespace kvc::policy {
namespace {

namespace b = api::binding;
using api::Condition;
using api::makeCondition;

const ObservedTenant* ledgerEntry(const MasterReading& reading, const std::string& domain) {
  for (const ObservedTenant& tenant : reading.tenants) {
    if (tenant.tenant_id == domain) {
      return &tenant;
    }
  }
  return nullptr;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The deleting Binding's ledger entry is gone, or never was this Binding's to release.
bool entryReleased(const BindingFacts& facts, const MasterReading& reading) {
  const std::string& domain = facts.binding.spec.domain.name;
  if (facts.nothing_owed || facts.domain_claimed_elsewhere ||
      reading.ledger == LedgerState::NoLedger) {
    return true;
  }
  if (reading.ledger != LedgerState::Read) {
    return false;
  }
  const ObservedTenant* entry = ledgerEntry(reading, domain);
  return entry == nullptr || !entry->has_explicit_policy;
}

Condition releasable(const BindingFacts& facts, const MasterReading& reading) {
  const std::string& domain = facts.binding.spec.domain.name;
  const std::string self = "KVCachePoolBinding " + facts.binding.metadata.namespace_name + "/" +
                           facts.binding.metadata.name;
  if (!facts.holders.empty()) {
    return makeCondition(b::kReleasable, api::kConditionFalse, b::kReasonHeldByWorkloads,
                         self + " is still referenced by " + api::nameList(facts.holders) +
                             ". Fix: delete those workloads, or point them at another Binding; "
                             "the reuse domain " +
                             inQuotes(domain) + " is then released from the ledger");
  }
  if (facts.admission_window_closes) {
    return makeCondition(
        b::kReleasable, api::kConditionFalse, b::kReasonLedgerNotReleased,
        "the reuse domain " + inQuotes(domain) + " stays in the ledger until " +
            *facts.admission_window_closes +
            " (the admission webhook's timeout after the deletion began), so that a Pod "
            "admitted just before the deletion is never injected against a released tenant");
  }
  if (contains(reading.retained, domain)) {
    return makeCondition(b::kReleasable, api::kConditionFalse, b::kReasonLedgerNotReleased,
                         "the master at " + reading.admin_address + " keeps the reuse domain " +
                             inQuotes(domain) +
                             ": the domain still holds objects (TENANT_NOT_EMPTY). It is retried "
                             "with backoff and released once its objects are gone");
  }
  if (auto it = reading.removal_errors.find(domain); it != reading.removal_errors.end()) {
    return makeCondition(b::kReleasable, api::kConditionFalse, b::kReasonLedgerRequestFailed,
                         "removing the quota of reuse domain " + inQuotes(domain) + " failed: " +
                             api::boundDetail(it->second) + ". It is retried with backoff");
  }
  const std::string why = reading.ledger_error.empty() ? "the ledger was not read this pass"
                                                       : api::boundDetail(reading.ledger_error);
  return makeCondition(
      b::kReleasable, api::kConditionFalse, b::kReasonLedgerNotReleased,
      "the reuse domain " + inQuotes(domain) +
          " cannot be removed from the "
          "ledger of " +
          (reading.admin_address.empty() ? std::string("the master") : reading.admin_address) +
          " yet: " + why +
          ". It is retried every 30 s; removing the finalizer by hand is the "
          "escape, and leaves the domain in the ledger");
}

// status.usedBy as it was, less the ModelDeployments that no longer exist (a finalizer removed
// by hand left their entry behind).
std::vector<api::ObjectReference> liveUsers(const BindingFacts& facts) {
  std::vector<api::ObjectReference> used_by = facts.binding.status.used_by;
  std::erase_if(used_by, [&](const api::ObjectReference& user) {
    return user.kind == api::kKindModelDeployment && contains(facts.gone_users, user.name);
  });
  return used_by;
}

// Another live Binding on the same master claims the domain (a deleting Binding contests no
// one: it is leaving the ledger anyway).
bool contested(const BindingFacts& facts) {
  return !facts.contested_with.empty() && !facts.binding.metadata.deleting;
}

// The scrape's figures for the Binding's domain, or nullptr (no scrape, or no series for it).
const TenantFigures* scrapedFigures(const BindingFacts& facts, const MasterReading& reading) {
  if (!reading.scraped) {
    return nullptr;
  }
  const auto figures = reading.tenant_figures.find(facts.binding.spec.domain.name);
  return figures == reading.tenant_figures.end() ? nullptr : &figures->second;
}

Condition domainExclusive(const BindingFacts& facts) {
  const std::string& domain = facts.binding.spec.domain.name;
  if (contested(facts)) {
    return makeCondition(
        b::kDomainExclusive, api::kConditionFalse, b::kReasonDomainClaimedByMultipleBindings,
        "the reuse domain " + inQuotes(domain) + " on KVCacheBackend " + inQuotes(facts.backend) +
            " is also claimed by KVCachePoolBinding " + api::nameList(facts.contested_with) +
            ", so it is left out of the ledger and no figure is reported. Fix: delete one of "
            "them");
  }
  return makeCondition(b::kDomainExclusive, api::kConditionTrue, b::kReasonExclusive,
                       "no other Binding on KVCacheBackend " + inQuotes(facts.backend) +
                           " claims the reuse domain " + inQuotes(domain));
}

// requestedQuota, effectiveQuota, usage and overQuota: this pass's scrape for the domain. None
// for a contested domain, without a tenant ledger, or when the scrape has no series for the
// domain; carried over when the scrape failed (the last pass that could read them).
void reportFigures(api::KVCachePoolBinding::Status& status, const BindingFacts& facts,
                   const MasterReading& reading) {
  const bool carry_over =
      !contested(facts) && reading.ledger != LedgerState::NoLedger && !reading.scraped;
  if (carry_over) {
    return;
  }
  const TenantFigures* figures = contested(facts) || reading.ledger == LedgerState::NoLedger
                                     ? nullptr
                                     : scrapedFigures(facts, reading);
  if (figures == nullptr) {
    status.requested_quota.reset();
    status.effective_quota.reset();
    status.usage.reset();
    status.over_quota.reset();
    return;
  }
  status.requested_quota = figures->requested_bytes;
  status.effective_quota = figures->effective_bytes;
  status.usage = figures->occupancy_bytes;
  status.over_quota = figures->over_quota;
}

// QuotaObserved (an uncontested domain): whether this pass read the domain's figures.
Condition quotaObserved(const BindingFacts& facts, const MasterReading& reading) {
  const std::string& domain = facts.binding.spec.domain.name;
  if (reading.ledger == LedgerState::NoLedger) {
    return makeCondition(
        b::kQuotaObserved, api::kConditionTrue, b::kReasonNoTenantLedger,
        "the master keeps no tenant ledger (multi-tenancy is off), so no figure is reported "
        "for the reuse domain " +
            inQuotes(domain) + "; every write lands in the default tenant");
  }
  if (!reading.scraped) {
    return makeCondition(b::kQuotaObserved, api::kConditionFalse, b::kReasonMasterNotScraped,
                         "the metrics of the master could not be read (" +
                             api::boundDetail(reading.scrape_error.empty() ? "not attempted"
                                                                           : reading.scrape_error) +
                             "); the figures are from the last pass that could read them");
  }
  const TenantFigures* figures = scrapedFigures(facts, reading);
  if (figures == nullptr) {
    return makeCondition(b::kQuotaObserved, api::kConditionTrue, b::kReasonTenantNotInLedger,
                         "the master's metrics carry no series for the reuse domain " +
                             inQuotes(domain) + ": no quota has been observed at all");
  }
  const TenantFigures& f = *figures;
  std::string message = "the master reports the reuse domain " + inQuotes(domain);
  message += f.occupancy_bytes ? " holding " + bytesText(*f.occupancy_bytes)
                               : std::string(" with no usage figure");
  if (f.occupancy_bytes && reading.occupancy_includes_in_flight) {
    message += " (charged bytes, which include writes not yet committed)";
  }
  return makeCondition(b::kQuotaObserved, api::kConditionTrue, b::kReasonObserved, message);
}

// QuotaGranted (an uncontested domain), or nullopt when this pass learned nothing (neither the
// ledger nor the metrics were read): the verdict then stands as it was made, its stamp
// included. In the ledger or not: from the ledger when it was read, else from the scrape; the
// grant from the scrape, else from the ledger entry.
std::optional<Condition> quotaGranted(const BindingFacts& facts, const MasterReading& reading) {
  const std::string& domain = facts.binding.spec.domain.name;
  if (reading.ledger == LedgerState::NoLedger) {
    return makeCondition(
        b::kQuotaGranted, api::kConditionTrue, b::kReasonUnenforced,
        "the ceiling is not enforced: the master keeps no tenant ledger, so there is no "
        "per-domain grant and every write lands in the store's default tenant");
  }
  const bool known = reading.ledger == LedgerState::Read || reading.scraped;
  if (!known) {
    return std::nullopt;
  }
  const ObservedTenant* entry =
      reading.ledger == LedgerState::Read ? ledgerEntry(reading, domain) : nullptr;
  const TenantFigures* figures = scrapedFigures(facts, reading);
  const bool in_ledger = reading.ledger == LedgerState::Read
                             ? entry != nullptr && entry->has_explicit_policy
                             : figures != nullptr && figures->explicit_policy.value_or(false);
  std::optional<std::int64_t> grant;
  if (figures != nullptr) {
    grant = figures->effective_bytes;
  } else if (!reading.scraped && in_ledger && entry != nullptr) {
    grant = entry->effective_bytes;  // the metrics are unreadable; the ledger says it
  }
  if (!in_ledger) {
    return makeCondition(b::kQuotaGranted, api::kConditionFalse, b::kReasonNoLedgerEntry,
                         "the reuse domain " + inQuotes(domain) +
                             " is not in the tenant ledger of " + reading.admin_address +
                             " yet, so writes under it are refused "
                             "(TENANT_NOT_REGISTERED). See the pool's QuotaLedgerAvailable and "
                             "QuotaPolicyWritable");
  }
  if (!grant) {
    return makeCondition(b::kQuotaGranted, api::kConditionFalse, b::kReasonGrantNotExported,
                         "the reuse domain " + inQuotes(domain) +
                             " is in the ledger, but the master's metrics "
                             "do not export its grant (mooncake_tenant_quota_effective_bytes)");
  }
  if (*grant == 0) {
    return makeCondition(
        b::kQuotaGranted, api::kConditionFalse, b::kReasonZeroGranted,
        "the master grants the reuse domain " + inQuotes(domain) +
            " nothing (effectiveQuota 0). Read the pool's CapacityAllocatable: "
            "NothingToAllocate means no member has mounted yet (a restarted master can take "
            "about 30 s to remount); otherwise the proportional recut left this domain no "
            "share");
  }
  return makeCondition(
      b::kQuotaGranted, api::kConditionTrue, b::kReasonGranted,
      "the master grants the reuse domain " + inQuotes(domain) + " " + bytesText(*grant));
}

// The phase (contract §5), from the conditions already set: Deleting, with Releasable's
// message; Error on the first axis that is not True; Provisioning while an axis has not been
// observed; Ready, with QuotaObserved's message.
void setPhase(api::KVCachePoolBinding::Status& status, const BindingFacts& facts) {
  status.phase_message.clear();
  if (facts.binding.metadata.deleting) {
    status.phase = std::string(api::kPhaseDeleting);
    status.phase_message = api::findCondition(status.conditions, b::kReleasable)->message;
    return;
  }
  std::string absent;
  for (std::string_view axis : {b::kDomainExclusive, b::kQuotaObserved, b::kQuotaGranted}) {
    const Condition* condition = api::findCondition(status.conditions, axis);
    if (condition == nullptr) {
      if (absent.empty()) {
        absent = std::string(axis);
      }
      continue;
    }
    if (condition->status != api::kConditionTrue) {
      status.phase = std::string(api::kPhaseError);
      status.phase_message = condition->message;
      return;
    }
  }
  if (!absent.empty()) {
    status.phase = std::string(api::kPhaseProvisioning);
    status.phase_message = absent + " has not been observed yet";
    return;
  }
  status.phase = std::string(api::kPhaseReady);
  status.phase_message = api::findCondition(status.conditions, b::kQuotaObserved)->message;
}

}  // namespace

bool bindingReleased(const BindingFacts& facts, const MasterReading& reading) {
  return facts.binding.metadata.deleting && facts.holders.empty() &&
         !facts.admission_window_closes && entryReleased(facts, reading);
}

api::KVCachePoolBinding::Status bindingStatus(const BindingFacts& facts,
                                              const MasterReading& reading, std::int64_t generation,
                                              std::string_view now) {
  api::KVCachePoolBinding::Status status = facts.binding.status;  // the figures carry over
  status.used_by = liveUsers(facts);
  reportFigures(status, facts, reading);

  // The conditions, in the order they are set (a condition new to the status is appended in
  // this order). A contested domain is judged by DomainExclusive alone.
  std::vector<Condition> desired;
  desired.push_back(domainExclusive(facts));
  std::optional<Condition> granted;
  if (!contested(facts)) {
    desired.push_back(quotaObserved(facts, reading));
    granted = quotaGranted(facts, reading);
    if (granted) {
      desired.push_back(*granted);
    }
  }
  // A contested or deleting domain has no hit rate of its own and no alarm to raise; one whose
  // engine Pods the reader has not all reached yet keeps both as they were.
  const bool judged = !contested(facts) && !facts.binding.metadata.deleting;
  const bool use_owned = facts.use && (!judged || settled(*facts.use));
  if (use_owned) {
    status.hit_rate = judged ? hitRate(*facts.use) : std::nullopt;
    if (judged) {
      desired.push_back(cacheUsed(*facts.use, status.usage, facts.binding.spec.domain.name,
                                  facts.binding.metadata.namespace_name,
                                  facts.binding.metadata.name));
    }
  }
  if (facts.binding.metadata.deleting) {
    desired.push_back(releasable(facts, reading));
  }
  std::vector<std::string_view> owned = {b::kDomainExclusive, b::kQuotaObserved, b::kReleasable};
  if (use_owned) {
    owned.push_back(kCacheUsed);
  }
  if (contested(facts) || granted) {
    owned.push_back(b::kQuotaGranted);  // carried over untouched otherwise, its stamp included
  }
  api::setConditions(status.conditions, desired, owned, generation, now);
  setPhase(status, facts);
  return status;
}

}  // namespace kvc::policy
