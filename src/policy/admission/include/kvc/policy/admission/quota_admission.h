#pragma once
// Validating admission of KVCachePool and KVCachePoolBinding (contract §1 "Where validation
// lives" and "Update rules", §4 "Spec and admission", §5 "Admission"). Pure: the webhook's
// adapter looks up what a rule reads (the backend, the pool, the other Bindings on the same
// master) and this decides. Every violation is collected, so one refusal names them all.
//
// Update rules: a rule that judges a value the update did not change is skipped, so an object
// admitted under older rules is never stranded; a rule that reads outside state runs only when
// its field moved. A finalizer-removal update changes no spec field and is therefore never
// refused.

#include <optional>
#include <string>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/pool.h"
#include "kvc/policy/base/admission_verdict.h"

namespace kvc::policy {

struct PoolAdmission {
  AdmissionOperation operation = AdmissionOperation::Create;
  api::KVCachePool pool;
  std::optional<api::KVCachePool> old;  // UPDATE
  // CREATE: the backend spec.backends[0] names, as looked up (nullopt: it does not exist).
  // The adapter answers a failed lookup itself: a read error is never "not found".
  std::optional<api::KVCacheBackend> backend;
};

AdmissionVerdict admitPool(const PoolAdmission& request);

// What is known of the master's ledger, for "one domain on a master without a ledger".
enum class LedgerKnowledge { HasLedger, NoLedger, Unknown };

// Another Binding on the same master (same backend).
struct SiblingBinding {
  std::string namespace_name;
  std::string name;
  std::string domain;
};

struct BindingAdmission {
  AdmissionOperation operation = AdmissionOperation::Create;
  api::KVCachePoolBinding binding;
  std::optional<api::KVCachePoolBinding> old;  // UPDATE
  bool dtype_owned = true;                     // the Setting model-deployment-kv-cache-dtype-owned
  // Looked up on CREATE, and on UPDATE when the ceiling moved. `pool_looked_up` false: not
  // needed; true with no `pool`: it does not exist.
  bool pool_looked_up = false;
  std::optional<api::KVCachePool> pool;
  std::string backend;  // the pool's backend, when the pool was found
  // CREATE: the other Bindings on that backend, and what is known of its ledger.
  std::vector<SiblingBinding> siblings;
  LedgerKnowledge ledger = LedgerKnowledge::Unknown;
};

AdmissionVerdict admitBinding(const BindingAdmission& request);

// What the webhook knows of a master's ledger from its pool and backend: the pool reports
// QuotaLedgerAvailable True (HasLedger) or False/MultiTenancyDisabled (NoLedger), or a managed
// backend declares multiTenancy (false: NoLedger); anything else is Unknown.
LedgerKnowledge ledgerKnowledge(const api::KVCachePool& pool,
                                const std::optional<api::KVCacheBackend>& backend);

}  // namespace kvc::policy
