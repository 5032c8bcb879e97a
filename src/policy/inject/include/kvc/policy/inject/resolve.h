#pragma once
// Step two of injection: resolve the Binding a Pod names into what its engine will be given.
//
// Order (contract §7.2): the Binding (not found, being deleted), its pool, the pool's
// QuotaLedgerAvailable gate, the pool's backend, the published client endpoint, and the transport
// the engine can use among what the backend's member groups offer.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kvc/api/kvcache.h"
#include "kvc/common/status.h"
#include "kvc/policy/inject/cluster_view.h"
#include "kvc/policy/inject/engine.h"
#include "kvc/policy/inject/refusal.h"

namespace kvc::policy {

struct Resolution {
  std::string binding;  // the Binding's name
  std::string pool;
  std::string backend;
  std::string master_address;    // the pool's status.clientEndpoint
  std::string protocol;          // artifact spelling of the matched group's transport
  api::ReuseDomain domain;       // the Binding's reuse domain, recorded either way
  bool tenant_injected = false;  // false when the store is declared single-tenant
};

// A Resolution, a Refusal, or — when the cluster could not be read — an error Status, which the
// caller reports as an infrastructure failure and never as "does not exist".
using ResolveOutcome = std::variant<Resolution, Refusal, Status>;

ResolveOutcome resolveBinding(std::string_view namespace_name, std::string_view binding_name,
                              Engine engine, const ClusterView& cluster);

// The transport rule of §7.2 step 10, shared with ModelDeployment admission (a new binding is
// checked with it, since that path does not go through Pod injection): the protocol `engine` is
// configured with on pool `pool`, whose backend `backend` offers `offers` (artifact spelling, as
// api::offeredTransports lists them), or the refusal. An engine with a required transport
// (vLLM-Ascend: ascend) needs a group offering it; any other engine is refused on mixed
// protocols. No offer at all is tcp.
std::variant<std::string, Refusal> matchTransport(Engine engine,
                                                  const std::vector<std::string>& offers,
                                                  std::string_view pool, std::string_view backend);

}  // namespace kvc::policy
