#pragma once
// What one pool pass read from a master (contract §4, §5, §6), in the terms the status rules
// use. The controller fills it from the store client; the pure status functions read it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvc/policy/quota/quota_ledger.h"

namespace kvc::policy {

// How the ledger answered.
enum class LedgerState {
  NoLedger,     // a declared single-tenant store (no HTTP call) or 409 -1011 from the master
  Unreachable,  // any other failure reading the ledger (the pass wrote nothing)
  Read,         // read (and converged as far as the writes went)
};

// One tenant's series in the scrape; each figure absent when its family was not exported.
struct TenantFigures {
  std::optional<std::int64_t> requested_bytes;
  std::optional<std::int64_t> effective_bytes;
  std::optional<std::int64_t> occupancy_bytes;
  std::optional<bool> over_quota;
  std::optional<bool> explicit_policy;
};

struct MasterReading {
  std::string admin_address;

  LedgerState ledger = LedgerState::Unreachable;
  bool declared_single_tenant = false;  // NoLedger because the backend says so (no request made)
  // The ledger after this pass's writes (Read only).
  std::vector<ObservedTenant> tenants;
  // The first failure of the pass on the ledger, its action named ("reading the tenant ledger",
  // "writing the quota of reuse domain team-a", "removing the quota of reuse domain x"): it
  // makes QuotaLedgerAvailable False/LedgerUnreachable.
  std::string ledger_error;
  // A ledger request got no answer at all (refused, reset, or the deadline passed with the
  // connection open: a hung master): the pass asks that master nothing more, not even its
  // metrics, so that one silent master costs a worker one deadline, not two.
  bool ledger_unanswered = false;
  // 500 -1503 PERSISTENT_FAIL on a write: the policy could not be saved, nothing applied.
  std::string persist_error;
  // Domains whose removal the master refused with TENANT_NOT_EMPTY (kept, still charged).
  std::vector<std::string> retained;
  // Per domain, a removal that failed for another reason (the message).
  std::map<std::string, std::string> removal_errors;

  bool scraped = false;  // /metrics read and parsed
  std::string scrape_error;
  std::optional<std::int64_t>
      allocatable_bytes;  // mooncake_tenant_quota_allocatable_capacity_bytes
  std::optional<std::int64_t> total_capacity_bytes;  // master_total_capacity_bytes
  std::map<std::string, TenantFigures> tenant_figures;
  // The occupancy figure counts uncommitted writes (0.3.13's charged bytes).
  bool occupancy_includes_in_flight = false;

  bool inLedger(const std::string& domain) const;
};

}  // namespace kvc::policy
