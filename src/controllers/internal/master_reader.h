#pragma once
// The I/O that fills the policy layer's readings from a master, and carries out a ledger plan:
// everything the backend and pool controllers ask a master, in the order the contract gives,
// each request with its own deadline (the admin client's).

#include <set>
#include <string>
#include <vector>

#include "kvc/policy/quota/master_reading.h"
#include "kvc/policy/quota/quota_ledger.h"
#include "kvc/policy/store/backend_status.h"
#include "kvc/store/admin_client.h"

namespace kvc::controllers::internal {

// /health, then — only while it serves — /metrics and /get_segments_detail: at most three
// sequential reads (contract §2.8).
policy::BackendReading readBackend(store::AdminClient& client);

// The ledger half of a pool pass on one master.
class LedgerSession {
public:
  explicit LedgerSession(store::AdminClient& client) : client_(client) {}

  // GET the ledger. NoLedger on 409 -1011; Unreachable (with the error) otherwise, marked
  // unanswered when nothing answered at all.
  void read(policy::MasterReading& reading);
  // Carries out the plan: PUTs, then DELETEs. The first failure that is not a per-domain answer
  // (TENANT_NOT_EMPTY retains, PERSISTENT_FAIL is recorded, a removal of an unknown tenant is
  // done) stops the writes and is recorded with its action named. Returns the domains written
  // (PUT or removed, in the plan's order); when there are any the ledger is read again (the
  // grants moved).
  std::vector<std::string> apply(const policy::LedgerPlan& plan, policy::MasterReading& reading);
  // One /metrics scrape (a pool pass makes one, after its ledger writes): capacity figures and
  // every tenant's series, replacing whatever the reading held. Not attempted when the ledger
  // request went unanswered (reading.ledger_unanswered): scrape_error says so.
  void scrape(policy::MasterReading& reading);

private:
  store::AdminClient& client_;
};

// The tenants of a ledger list, as the policy layer reads them.
std::vector<policy::ObservedTenant> observedTenants(const std::vector<store::TenantQuota>& list);

}  // namespace kvc::controllers::internal
