#pragma once
// The tenant ledger of one master, as the pool controller converges it (contract §4 "Reconcile
// model"): which reuse domains the master should hold and with what requested bytes, which are
// contested, and the PUTs and DELETEs that bring the observed ledger there. Pure: the controller
// gathers the Bindings of every pool on the backend and what the master answered; this decides.
//
//   desiredLedger(claims)
//     every live Binding's domain is a claim; a domain claimed by one live Binding is desired
//     with that Binding's ceiling; a domain claimed by two or more live Bindings is contested:
//     left out of the ledger (and out of the pools' status.domains), each claimant reporting the
//     others. A deleting Binding claims nothing: its domain is released unless a live Binding
//     still claims it.
//   planLedger(desired, observed, registered, releasable)
//     PUT each desired domain unless its entry already has an explicit policy with the same
//     requested bytes; DELETE an observed entry that is not desired only when this operator
//     registered it (`registered`), it has an explicit policy, it is not contested, and — for a
//     releasing Binding's domain — its release is due (`releasable`). Everything else observed
//     is left alone: entries someone else made, orphan accounts, contested domains.
//   ledgerRipple(claims, written, before, after)
//     which pools of the master a pass's ledger writes reach, so that only those are passed
//     again at once (see below).
// The store computes the grants; nothing here predicts them.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kvc::policy {

// One Binding's claim on a reuse domain of the master.
struct DomainClaim {
  std::string domain;
  std::string binding_namespace;
  std::string binding_name;
  std::string pool;
  std::int64_t ceiling_bytes = 0;
  bool deleting = false;

  std::string bindingKey() const { return binding_namespace + "/" + binding_name; }
};

struct DesiredLedger {
  std::map<std::string, std::int64_t> tenants;  // domain -> requested bytes
  // domain -> the live claimants ("ns/name"), sorted; two or more each
  std::map<std::string, std::vector<std::string>> contested;
  // domains only deleting Bindings claim
  std::set<std::string> releasing;
};

DesiredLedger desiredLedger(const std::vector<DomainClaim>& claims);

// An entry of the master's ledger as read back.
struct ObservedTenant {
  std::string tenant_id;
  std::int64_t requested_bytes = 0;
  bool has_explicit_policy = false;
  std::int64_t effective_bytes = 0;  // the grant, as the ledger reports it
};

struct LedgerPlan {
  std::vector<std::pair<std::string, std::int64_t>> puts;  // domain, requested bytes; sorted
  std::vector<std::string> deletes;                        // sorted
  // Releasing domains kept this pass because their release is not due yet.
  std::vector<std::string> held;
};

LedgerPlan planLedger(const DesiredLedger& desired, const std::vector<ObservedTenant>& observed,
                      const std::set<std::string>& registered,
                      const std::set<std::string>& releasable);

// The pools whose Bindings' grants a pass's ledger writes may have moved. The store recuts every
// grant while the explicit requests exceed its capacity (mooncake.md §5: floor(capacity × req /
// S)); a ledger that shows a shortfall (an explicit entry granted less than it requested) before
// or after the writes is such a recut, and reaches every pool with a claim on the master.
// Otherwise a write moves only its own domain's grant: it reaches the pools with a Binding
// claiming a written domain. `after_read` false (the ledger could not be read back) counts as a
// recut: nothing is known of the grants.
struct LedgerRipple {
  bool recut = false;
  std::set<std::string> pools;
};

LedgerRipple ledgerRipple(const std::vector<DomainClaim>& claims,
                          const std::vector<std::string>& written,
                          const std::vector<ObservedTenant>& before,
                          const std::vector<ObservedTenant>& after, bool after_read);

}  // namespace kvc::policy
