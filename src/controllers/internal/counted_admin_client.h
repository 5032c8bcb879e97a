#pragma once
// Every request the operator makes of a store's master, counted: the admin-client factory the
// controllers are given is wrapped once (register.cc), so that a backend's ledger operations and
// their errors show in kvcache_master_requests_total{backend,operation,result} whichever
// controller asked. The counter is updated after each answer; nothing else changes.

#include "kvc/controllers/store_access.h"
#include "kvc/runtime/metrics.h"

namespace kvc::controllers::internal {

// The metric family (created on first use).
inline constexpr std::string_view kMasterRequestsMetric = "kvcache_master_requests_total";

// `inner`'s clients, each request counted in `registry` by the target's backend, the operation
// (health, metrics, segments, ledger_list, ledger_get, ledger_put, ledger_delete) and the result
// ("ok", else the store error's kind: Transport, DeadlineExceeded, TenantNotEmpty, ...). A client
// that could not be made counts once as operation "connect".
AdminClientFactory countedAdminClients(AdminClientFactory inner, runtime::Registry& registry);

}  // namespace kvc::controllers::internal
