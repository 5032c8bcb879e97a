#include "kvc/policy/quota/quota_ledger.h"

#include <algorithm>

namespace kvc::policy {

DesiredLedger desiredLedger(const std::vector<DomainClaim>& claims) {
  DesiredLedger out;
  std::map<std::string, std::vector<const DomainClaim*>> live;
  std::set<std::string> deleting;
  for (const DomainClaim& claim : claims) {
    if (claim.deleting) {
      deleting.insert(claim.domain);
    } else {
      live[claim.domain].push_back(&claim);
    }
  }
  for (const auto& [domain, claimants] : live) {
    if (claimants.size() == 1) {
      out.tenants[domain] = claimants.front()->ceiling_bytes;
      continue;
    }
    std::vector<std::string> names;
    for (const DomainClaim* claim : claimants) {
      names.push_back(claim->bindingKey());
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    out.contested[domain] = std::move(names);
  }
  for (const std::string& domain : deleting) {
    if (live.count(domain) == 0) {
      out.releasing.insert(domain);
    }
  }
  return out;
}

LedgerPlan planLedger(const DesiredLedger& desired, const std::vector<ObservedTenant>& observed,
                      const std::set<std::string>& registered,
                      const std::set<std::string>& releasable) {
  LedgerPlan plan;
  std::map<std::string, const ObservedTenant*> by_id;
  for (const ObservedTenant& tenant : observed) {
    by_id[tenant.tenant_id] = &tenant;
  }
  for (const auto& [domain, bytes] : desired.tenants) {
    auto it = by_id.find(domain);
    if (it == by_id.end() || !it->second->has_explicit_policy ||
        it->second->requested_bytes != bytes) {
      plan.puts.emplace_back(domain, bytes);
    }
  }
  for (const auto& [id, tenant] : by_id) {
    if (desired.tenants.count(id) > 0 || desired.contested.count(id) > 0 ||
        !tenant->has_explicit_policy || registered.count(id) == 0) {
      continue;
    }
    if (desired.releasing.count(id) > 0 && releasable.count(id) == 0) {
      plan.held.push_back(id);
      continue;
    }
    plan.deletes.push_back(id);
  }
  return plan;
}

namespace {

bool showsShortfall(const std::vector<ObservedTenant>& ledger) {
  return std::any_of(ledger.begin(), ledger.end(), [](const ObservedTenant& tenant) {
    return tenant.has_explicit_policy && tenant.effective_bytes < tenant.requested_bytes;
  });
}

}  // namespace

LedgerRipple ledgerRipple(const std::vector<DomainClaim>& claims,
                          const std::vector<std::string>& written,
                          const std::vector<ObservedTenant>& before,
                          const std::vector<ObservedTenant>& after, bool after_read) {
  LedgerRipple ripple;
  if (written.empty()) {
    return ripple;
  }
  ripple.recut = !after_read || showsShortfall(before) || showsShortfall(after);
  const std::set<std::string> moved(written.begin(), written.end());
  for (const DomainClaim& claim : claims) {
    if (ripple.recut || moved.count(claim.domain) > 0) {
      ripple.pools.insert(claim.pool);
    }
  }
  return ripple;
}

}  // namespace kvc::policy
