#include "kvc/policy/admission/quota_admission.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "kvc/api/pool_conditions.h"
#include "kvc/common/quantity.h"
#include "kvc/policy/base/text.h"
#include "kvc/policy/quota/tenant_quota_policy.h"

namespace kvc::policy {

AdmissionVerdict admitPool(const PoolAdmission& request) {
  AdmissionVerdict verdict;
  const api::KVCachePool& pool = request.pool;
  const bool create = request.operation == AdmissionOperation::Create || !request.old;
  const bool backends_moved = create || request.old->spec.backends != pool.spec.backends;
  if (!create && backends_moved) {
    verdict.errors.push_back(
        {FieldErrorType::Forbidden, "spec.backends", std::nullopt,
         "a pool cannot be re-pointed at another backend (the field is immutable); create "
         "another KVCachePool and Bindings for it"});
  } else if (backends_moved && pool.spec.backends.size() != 1) {
    verdict.errors.push_back(
        {FieldErrorType::Invalid, "spec.backends", std::nullopt,
         "must name exactly one KVCacheBackend, not " + std::to_string(pool.spec.backends.size())});
  } else if (backends_moved && pool.spec.backends.front().empty()) {
    verdict.errors.push_back({FieldErrorType::Required, "spec.backends[0]", std::nullopt,
                              "the KVCacheBackend's name is empty; name the backend the pool "
                              "draws on"});
  }
  if (create || request.old->spec.quota_total != pool.spec.quota_total) {
    if (auto error = byteQuantityError("spec.quota.total", pool.spec.quota_total)) {
      verdict.errors.push_back(*error);
    }
  }
  if (create && pool.spec.backends.size() == 1 && !pool.spec.backends.front().empty()) {
    const std::string& name = pool.spec.backends.front();
    if (!request.backend) {
      verdict.errors.push_back(
          {FieldErrorType::NotFound, "spec.backends[0]", name,
           "KVCacheBackend " + inQuotes(name) + " does not exist; create it before the pool"});
    } else if (request.backend->spec.managed && !request.backend->spec.multi_tenancy) {
      verdict.warnings.push_back(
          "KVCacheBackend " + inQuotes(name) +
          " declares leader.multiTenancy: false: no per-tenant quota in force. Ceilings are not "
          "enforced, every write lands in the store's default tenant, and the master serves one "
          "reuse domain");
    }
  }
  return verdict;
}

LedgerKnowledge ledgerKnowledge(const api::KVCachePool& pool,
                                const std::optional<api::KVCacheBackend>& backend) {
  if (const api::Condition* ledger =
          api::findCondition(pool.status.conditions, api::pool::kQuotaLedgerAvailable)) {
    if (ledger->status == api::kConditionTrue) {
      return LedgerKnowledge::HasLedger;
    }
    if (ledger->status == api::kConditionFalse &&
        ledger->reason == api::pool::kReasonMultiTenancyDisabled) {
      return LedgerKnowledge::NoLedger;
    }
  }
  if (backend && backend->spec.managed) {
    return backend->spec.multi_tenancy ? LedgerKnowledge::HasLedger : LedgerKnowledge::NoLedger;
  }
  return LedgerKnowledge::Unknown;
}

namespace {

// An UPDATE may not move the pool a Binding draws on, nor any part of its reuse domain.
std::vector<FieldError> movedImmutables(const api::KVCachePoolBinding& old,
                                        const api::KVCachePoolBinding& binding) {
  std::vector<FieldError> errors;
  const api::ReuseDomain& domain = binding.spec.domain;
  if (old.spec.pool_ref != binding.spec.pool_ref) {
    errors.push_back({FieldErrorType::Forbidden, "spec.poolRef.name", std::nullopt,
                      "the pool a Binding draws on is immutable; create another "
                      "Binding"});
  }
  for (auto [field, moved] :
       {std::pair{"spec.domain.name", old.spec.domain.name != domain.name},
        std::pair{"spec.domain.blockSize", old.spec.domain.block_size != domain.block_size},
        std::pair{"spec.domain.dtype", old.spec.domain.dtype != domain.dtype}}) {
    if (moved) {
      errors.push_back(
          {FieldErrorType::Forbidden, field, std::nullopt,
           "the reuse domain is immutable: workloads sharing it read each other's cached "
           "blocks, so it cannot change under them; create another Binding"});
    }
  }
  return errors;
}

// A new Binding's reuse domain: a valid tenant name, a positive block size, and a dtype in the
// engines' lowercase spelling; not "auto" while the operator owns the dtype (one domain, one
// dtype).
std::vector<FieldError> newDomainErrors(const api::ReuseDomain& domain, bool dtype_owned) {
  std::vector<FieldError> errors;
  if (Status valid = validateTenantName(domain.name); !valid.ok()) {
    errors.push_back({FieldErrorType::Invalid, "spec.domain.name", domain.name, valid.message()});
  }
  if (domain.block_size <= 0) {
    errors.push_back({FieldErrorType::Invalid, "spec.domain.blockSize",
                      std::to_string(domain.block_size), "must be greater than zero"});
  }
  bool lowercase = !domain.dtype.empty();
  for (char c : domain.dtype) {
    lowercase = lowercase && !(c >= 'A' && c <= 'Z');
  }
  if (!lowercase) {
    errors.push_back({FieldErrorType::Invalid, "spec.domain.dtype", domain.dtype,
                      "must be the engine's lowercase spelling, e.g. bfloat16"});
  } else if (domain.dtype == "auto" && dtype_owned) {
    errors.push_back(
        {FieldErrorType::Invalid, "spec.domain.dtype", domain.dtype,
         "a reuse domain holds one dtype, and \"auto\" lets each engine pick its own, so two "
         "workloads could write different dtypes into one domain. Name the dtype the engines "
         "run (e.g. bfloat16), or turn the Setting model-deployment-kv-cache-dtype-owned off"});
  }
  return errors;
}

// When the pool was looked up: it must exist, and a ceiling that was set or changed (and
// parses: `check_ceiling`) must fit within its quota.total.
std::optional<FieldError> poolError(const BindingAdmission& request, bool check_ceiling) {
  const api::KVCachePoolBinding& binding = request.binding;
  if (!request.pool_looked_up) {
    return std::nullopt;
  }
  if (!request.pool) {
    return FieldError{FieldErrorType::NotFound, "spec.poolRef.name", binding.spec.pool_ref,
                      "KVCachePool " + inQuotes(binding.spec.pool_ref) +
                          " does not exist; create the pool first"};
  }
  if (!check_ceiling) {
    return std::nullopt;
  }
  auto ceiling = parseQuantityBytes(binding.spec.quota_ceiling);
  auto total = parseQuantityBytes(request.pool->spec.quota_total);
  if (ceiling.ok() && total.ok() && *ceiling > *total) {
    return FieldError{FieldErrorType::Invalid, "spec.quota.ceiling", binding.spec.quota_ceiling,
                      "must be at most the quota.total of KVCachePool " +
                          inQuotes(binding.spec.pool_ref) + " (" + request.pool->spec.quota_total +
                          ")"};
  }
  return std::nullopt;
}

// A new Binding's domain on its master (the pool's backend): refused when another Binding
// registers it already; with another domain registered, refused on a master that keeps no
// ledger (it serves one domain), a warning while that is not known yet.
AdmissionVerdict domainUniqueness(const BindingAdmission& request) {
  AdmissionVerdict verdict;
  const api::KVCachePoolBinding& binding = request.binding;
  const api::ReuseDomain& domain = binding.spec.domain;
  std::vector<SiblingBinding> siblings = request.siblings;
  std::sort(siblings.begin(), siblings.end(), [](const SiblingBinding& a, const SiblingBinding& b) {
    return std::tie(a.namespace_name, a.name) < std::tie(b.namespace_name, b.name);
  });
  std::vector<std::string> holders;
  std::set<std::string> other_domains;
  for (const SiblingBinding& sibling : siblings) {
    if (sibling.namespace_name == binding.metadata.namespace_name &&
        sibling.name == binding.metadata.name) {
      continue;
    }
    if (sibling.domain == domain.name) {
      holders.push_back(sibling.namespace_name + "/" + sibling.name);
    } else {
      other_domains.insert(sibling.domain);
    }
  }
  if (!holders.empty()) {
    verdict.errors.push_back(
        {FieldErrorType::Duplicate, "spec.domain.name", domain.name,
         "the reuse domain is already registered by " + holders.front() + " on KVCacheBackend " +
             inQuotes(request.backend) +
             " (the same master); give each Binding a unique spec.domain.name (an omitted "
             "name is \"default\")"});
  } else if (!other_domains.empty()) {
    if (request.ledger == LedgerKnowledge::NoLedger) {
      verdict.errors.push_back(
          {FieldErrorType::Forbidden, "spec.domain.name", domain.name,
           "KVCacheBackend " + inQuotes(request.backend) +
               " keeps no tenant ledger (multi-tenancy is off), so its master serves one "
               "reuse domain, and " +
               inQuotes(*other_domains.begin()) +
               " is registered on it already; bind to a pool on a multi-tenant backend"});
    } else if (request.ledger == LedgerKnowledge::Unknown) {
      verdict.warnings.push_back(
          "whether the master of KVCacheBackend " + inQuotes(request.backend) +
          " keeps a tenant ledger is not known yet; without one it serves a single reuse "
          "domain, and " +
          inQuotes(*other_domains.begin()) + " is registered on it already");
    }
  }
  return verdict;
}

}  // namespace

// Every error is collected, so that one refusal names them all.
AdmissionVerdict admitBinding(const BindingAdmission& request) {
  AdmissionVerdict verdict;
  const api::KVCachePoolBinding& binding = request.binding;
  const bool create = request.operation == AdmissionOperation::Create || !request.old;
  auto add = [&verdict](std::vector<FieldError> errors) {
    verdict.errors.insert(verdict.errors.end(), errors.begin(), errors.end());
  };
  add(create ? newDomainErrors(binding.spec.domain, request.dtype_owned)
             : movedImmutables(*request.old, binding));
  const bool ceiling_moved =
      create || request.old->spec.quota_ceiling != binding.spec.quota_ceiling;
  const std::optional<FieldError> ceiling_error =
      ceiling_moved ? byteQuantityError("spec.quota.ceiling", binding.spec.quota_ceiling)
                    : std::nullopt;
  if (ceiling_error) {
    verdict.errors.push_back(*ceiling_error);
  }
  if (auto error = poolError(request, ceiling_moved && !ceiling_error)) {
    verdict.errors.push_back(*error);
  }
  if (create && request.pool) {
    AdmissionVerdict unique = domainUniqueness(request);
    add(std::move(unique.errors));
    verdict.warnings.insert(verdict.warnings.end(), unique.warnings.begin(), unique.warnings.end());
  }
  return verdict;
}

}  // namespace kvc::policy
