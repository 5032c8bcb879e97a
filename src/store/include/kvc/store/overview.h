#pragma once
// One look at a master: health, capacity, members and the tenant ledger, as printed by
// `kvcache store status`. Each part is read on its own, so one failing read (say, a master
// without multi-tenancy refusing the ledger) leaves the others readable.

#include <string>

#include "kvc/common/json.h"
#include "kvc/common/quantity.h"  // humanBytes, which the overview text uses
#include "kvc/store/admin_client.h"

namespace kvc::store {

struct StoreOverview {
  std::string admin_address;
  StoreResult<Health> health;
  StoreResult<StoreMetrics> metrics;
  StoreResult<SegmentListing> segments;
  StoreResult<std::vector<TenantQuota>> ledger;
};

// Reads the four parts in order: /health, /metrics, /get_segments_detail, the ledger list.
StoreOverview readOverview(AdminClient& client);

// True when the master answered every part, counting "multi-tenancy disabled" as an answer, and
// reported service_ready.
bool overviewHealthy(const StoreOverview& overview);

// A table for people: sizes in binary units with exact bytes where it matters.
std::string renderOverviewTable(const StoreOverview& overview);

// The same content for programs: exact byte figures, absent figures as null, failures as
// {"error": {"kind", "message", "httpStatus", "errorCode"}}.
Json overviewToJson(const StoreOverview& overview);

}  // namespace kvc::store
