#include "kvc/policy/inject/resolve.h"

#include "kvc/api/pool_conditions.h"
#include "kvc/api/transport.h"
#include "kvc/policy/base/text.h"
#include "kvc/policy/inject/keys.h"

namespace kvc::policy {
namespace {

// The ledger gate: nullopt admits (with or without a tenant, per `tenant`).
std::optional<Refusal> ledgerGate(const api::KVCachePool& pool, bool& tenant) {
  const api::Condition* ledger =
      api::findCondition(pool.status.conditions, api::pool::kQuotaLedgerAvailable);
  const std::string name = inQuotes(pool.metadata.name);
  if (ledger == nullptr) {
    return Refusal{RefusalReason::LedgerNotAvailable,
                   "KVCachePool " + name + " does not report " +
                       std::string(api::pool::kQuotaLedgerAvailable) +
                       " yet, so whether the store's tenant ledger can hold the reuse domain is "
                       "not known. Fix: wait for the pool's controller to report the condition"};
  }
  if (ledger->status == "True") {
    tenant = true;
    return std::nullopt;
  }
  const std::string said = ledger->reason.empty()
                               ? ""
                               : " with reason " + ledger->reason +
                                     (ledger->message.empty() ? "" : " (" + ledger->message + ")");
  if (ledger->status == "False" && ledger->reason == api::pool::kReasonMultiTenancyDisabled) {
    tenant = false;  // a declared single-tenant store: injected with no tenant id
    return std::nullopt;
  }
  if (ledger->status == "False") {
    std::string why = ledger->reason == "LedgerUnreachable"
                          ? ": a request to the store's master failed, which is an outage "
                            "rather than a setting"
                          : "";
    return Refusal{RefusalReason::LedgerNotAvailable,
                   "KVCachePool " + name + " reports " +
                       std::string(api::pool::kQuotaLedgerAvailable) + "=False" + said + why +
                       ". Fix: restore the master (see the pool's conditions), then create the "
                       "Pod again"};
  }
  return Refusal{RefusalReason::LedgerNotAvailable,
                 "KVCachePool " + name + " reports " +
                     std::string(api::pool::kQuotaLedgerAvailable) + "=" + ledger->status + said +
                     ", which is a wait rather than an answer. Fix: wait until the pool reports "
                     "the condition True, then create the Pod again"};
}

}  // namespace

ResolveOutcome resolveBinding(std::string_view namespace_name, std::string_view binding_name,
                              Engine engine, const ClusterView& cluster) {
  Resolution out;
  const std::string binding_ref =
      inQuotes(std::string(namespace_name) + "/" + std::string(binding_name));

  // The Binding, read live by the webhook.
  Lookup<api::KVCachePoolBinding> binding = cluster.binding(namespace_name, binding_name);
  if (!binding.ok()) {
    return binding.status().withContext("reading KVCachePoolBinding " + binding_ref);
  }
  if (!binding->has_value()) {
    return Refusal{RefusalReason::BindingNotFound,
                   "KVCachePoolBinding " + inQuotes(binding_name) +
                       " does not exist in namespace " + inQuotes(namespace_name) +
                       ": without it there is no provisioned domain or endpoint to resolve. "
                       "Fix: create the Binding in namespace " +
                       inQuotes(namespace_name) + ", or fix the name in " +
                       std::string(kAnnotationBinding)};
  }
  const api::KVCachePoolBinding& b = **binding;
  if (b.metadata.deleting) {
    return Refusal{RefusalReason::BindingTerminating,
                   "KVCachePoolBinding " + binding_ref +
                       " is being deleted: its reuse domain is being withdrawn from the store's "
                       "ledger, so the Pod would be injected and then fail every write with "
                       "TENANT_NOT_REGISTERED, and waiting does not heal it. Fix: wait for the "
                       "deletion to finish and create a new Binding, or point " +
                       std::string(kAnnotationBinding) + " at one that is not terminating"};
  }
  out.binding = b.metadata.name;
  out.domain = b.spec.domain;

  // The pool.
  Lookup<api::KVCachePool> pool = cluster.pool(b.spec.pool_ref);
  if (!pool.ok()) {
    return pool.status().withContext("reading KVCachePool " + inQuotes(b.spec.pool_ref));
  }
  if (!pool->has_value()) {
    return Refusal{RefusalReason::PoolNotFound,
                   "KVCachePoolBinding " + binding_ref + " references KVCachePool " +
                       inQuotes(b.spec.pool_ref) +
                       ", which does not exist. Fix: create the pool, or fix the poolRef "
                       "(spec.poolRef is immutable: create a Binding that names an existing "
                       "pool)"};
  }
  const api::KVCachePool& p = **pool;
  out.pool = p.metadata.name;

  if (auto refusal = ledgerGate(p, out.tenant_injected)) {
    return *refusal;
  }

  // The backend.
  if (p.spec.backends.empty() || p.spec.backends.front().empty()) {
    return Refusal{RefusalReason::PoolNamesNoBackend,
                   "KVCachePool " + inQuotes(p.metadata.name) +
                       " names no backend in spec.backends. Fix: create a pool that names "
                       "exactly one KVCacheBackend, and a Binding for it"};
  }
  const std::string& backend_name = p.spec.backends.front();
  Lookup<api::KVCacheBackend> backend = cluster.backend(backend_name);
  if (!backend.ok()) {
    return backend.status().withContext("reading KVCacheBackend " + inQuotes(backend_name));
  }
  if (!backend->has_value()) {
    return Refusal{RefusalReason::BackendNotFound,
                   "KVCachePool " + inQuotes(p.metadata.name) + " names KVCacheBackend " +
                       inQuotes(backend_name) +
                       ", which does not exist. Fix: create the backend, or bind to a pool "
                       "whose backend exists"};
  }
  out.backend = backend_name;

  // The endpoint the engine is pointed at.
  if (p.status.client_endpoint.empty()) {
    return Refusal{RefusalReason::ClientEndpointMissing,
                   "KVCachePool " + inQuotes(p.metadata.name) +
                       " has not published a client endpoint yet (status.clientEndpoint is "
                       "empty), so there is no address to point the engine at. Fix: wait for "
                       "the pool to report status.clientEndpoint"};
  }
  out.master_address = p.status.client_endpoint;

  // The transport: what the member groups offer, against what the engine accepts.
  auto transport =
      matchTransport(engine, api::offeredTransports(**backend), p.metadata.name, backend_name);
  if (auto* refusal = std::get_if<Refusal>(&transport)) {
    return std::move(*refusal);
  }
  out.protocol = std::get<std::string>(std::move(transport));
  return out;
}

std::variant<std::string, Refusal> matchTransport(Engine engine,
                                                  const std::vector<std::string>& offers,
                                                  std::string_view pool, std::string_view backend) {
  if (engine == Engine::VLLMAscend) {
    for (const std::string& offer : offers) {
      if (offer == "ascend") {
        return offer;
      }
    }
    return Refusal{RefusalReason::TransportUnsupported,
                   "KVCachePool " + inQuotes(pool) + " offers " + commaList(offers) +
                       " (KVCacheBackend " + inQuotes(backend) +
                       "), but vLLM-Ascend accepts only ascend: the container would fail to "
                       "start with \"MooncakeBackend does not support protocol '" +
                       (offers.empty() ? std::string("tcp") : offers.front()) +
                       "'\". Fix: pair vLLM-Ascend with a pool that offers CANN — set "
                       "spec.transport.protocol: CANN on the KVCacheBackend, or on one member "
                       "group's transport.protocol — or bind to another pool"};
  }
  if (offers.size() > 1) {
    return Refusal{RefusalReason::TransportMixed,
                   "KVCachePool " + inQuotes(pool) + " offers mixed transports (" +
                       commaList(offers) + ") across the member groups of KVCacheBackend " +
                       inQuotes(backend) + ": " + std::string(engineDisplayName(engine)) +
                       " is configured with one transport and fails with NotSupportedTransport "
                       "on a block held by a group using another. Fix: make the groups use one "
                       "protocol, or bind to another pool"};
  }
  return offers.empty() ? std::string("tcp") : offers.front();
}

}  // namespace kvc::policy
