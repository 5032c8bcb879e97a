#include "kvc/policy/model_deployment/model_deployment_status.h"

#include <algorithm>
#include <map>

#include "kvc/api/binding_conditions.h"
#include "kvc/api/message.h"
#include "kvc/api/model_deployment_conditions.h"
#include "kvc/api/phase.h"
#include "kvc/common/quantity.h"
#include "kvc/policy/base/text.h"
#include "kvc/policy/model_deployment/model_deployment_render.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {
namespace {

namespace md = api::model_deployment;
namespace b = api::binding;
using api::Condition;
using api::makeCondition;

std::optional<std::int64_t> integerAt(const Json& object, const char* pointer) {
  if (!object.is_object()) {
    return std::nullopt;
  }
  const Json value = object.value(Json::json_pointer(pointer), Json());
  if (!value.is_number_integer()) {
    return std::nullopt;
  }
  return value.get<std::int64_t>();
}

// Everything the conditions are decided from, looked up once.
struct View {
  const ModelDeploymentFacts& facts;
  const api::ModelDeployment& md;
  std::string namespace_name;
  std::string self;                    // "ModelDeployment team-a/qwen-chat"
  std::string binding_name;            // spec.kvCache.poolRef
  std::string binding_ref;             // "KVCachePoolBinding team-a/team-a"
  std::vector<std::string> managed;    // roles without roles[].command
  std::vector<std::string> unmanaged;  // roles with it
  std::map<std::string, const ModelDeploymentRoleFacts*> roles;

  explicit View(const ModelDeploymentFacts& f) : facts(f), md(f.deployment) {
    namespace_name = md.metadata.namespace_name;
    self = "ModelDeployment " + namespace_name + "/" + md.metadata.name;
    if (md.spec.kv_cache) {
      binding_name = md.spec.kv_cache->pool_ref;
      binding_ref = "KVCachePoolBinding " + namespace_name + "/" + binding_name;
    }
    for (const api::ModelDeploymentRole& role : md.spec.roles) {
      (role.command ? unmanaged : managed).push_back(role.name);
    }
    for (const ModelDeploymentRoleFacts& role : f.roles) {
      roles.emplace(role.name, &role);
    }
  }

  const ModelDeploymentRoleFacts* role(const std::string& name) const {
    auto it = roles.find(name);
    return it == roles.end() ? nullptr : it->second;
  }
  const RoleDeploymentObservation* live(const std::string& name) const {
    const ModelDeploymentRoleFacts* r = role(name);
    return r != nullptr && r->deployment ? &*r->deployment : nullptr;
  }
  const api::KVCachePoolBinding* binding() const {
    return facts.binding ? &*facts.binding : nullptr;
  }
  std::string domain() const {
    return facts.binding ? inQuotes(facts.binding->spec.domain.name) : std::string("\"\"");
  }
  std::string pool() const {
    return facts.binding ? inQuotes(facts.binding->spec.pool_ref) : std::string("\"\"");
  }
};

std::string workloadName(const View& v, const std::string& role) {
  return roleWorkloadName(v.md.metadata.name, role);
}

// ---------------------------------------------------------------------------------------------
// Binding-side verdicts shared by DomainRegistered, QuotaReserved and CacheAttached.

std::string frozenFix(const View& v) {
  return "spec.kvCache is frozen, so naming another Binding takes a new ModelDeployment (delete " +
         v.self + " and create it again)";
}

Condition bindingNotFound(std::string_view type, const View& v, std::string_view consequence) {
  return makeCondition(
      type, api::kConditionFalse, md::kReasonBindingNotFound,
      "KVCachePoolBinding " + inQuotes(v.binding_name) + ", named by spec.kvCache.poolRef of " +
          v.self + ", does not exist in namespace " + inQuotes(v.namespace_name) + ", so " +
          std::string(consequence) +
          ". Fix: ask the cluster administrator to create that Binding (it grants the namespace "
          "a pool); " +
          frozenFix(v));
}

Condition bindingDeleting(std::string_view type, const View& v, std::string_view consequence) {
  return makeCondition(
      type, api::kConditionFalse, md::kReasonBindingDeleting,
      v.binding_ref + " is being deleted: its reuse domain " + v.domain() +
          " is being withdrawn from the store's tenant ledger, so " + std::string(consequence) +
          ". The Binding stays in deletion (Releasable=False, HeldByWorkloads) while " + v.self +
          " references it. Fix: delete " + v.self +
          " and create it against a Binding that is not being deleted (spec.kvCache is frozen)");
}

std::optional<Condition> domainContested(std::string_view type, const View& v) {
  const Condition* exclusive =
      api::findCondition(v.binding()->status.conditions, b::kDomainExclusive);
  if (exclusive == nullptr || exclusive->status != api::kConditionFalse) {
    return std::nullopt;
  }
  return makeCondition(type, api::kConditionFalse, md::kReasonDomainContested,
                       v.binding_ref + " reports DomainExclusive=False, so its reuse domain " +
                           v.domain() +
                           " is left out of the store's tenant ledger and writes under it are "
                           "refused. The Binding says: " +
                           api::boundDetail(exclusive->message));
}

std::string saidBy(const View& v, const Condition& granted) {
  return v.binding_ref + " reports QuotaGranted=" + granted.status +
         (granted.reason.empty() ? "" : " (" + granted.reason + ")") + ": " +
         api::boundDetail(granted.message);
}

Condition notObserved(std::string_view type, const View& v, const Condition* granted,
                      std::string_view what) {
  std::string message = granted == nullptr ? v.binding_ref + " has not reported QuotaGranted yet"
                                           : saidBy(v, *granted);
  message += ", so " + std::string(what) +
             " is not known yet. It is reported once the "
             "controller of KVCachePool " +
             v.pool() + " has read the store's ledger";
  return makeCondition(type, api::kConditionUnknown, md::kReasonNotObserved, std::move(message));
}

// The verdict every Binding-side condition starts with: nullopt when the Binding is there, live
// and uncontested.
std::optional<Condition> bindingProblem(std::string_view type, const View& v,
                                        std::string_view consequence) {
  if (v.binding() == nullptr) {
    return bindingNotFound(type, v, consequence);
  }
  if (v.binding()->metadata.deleting) {
    return bindingDeleting(type, v, consequence);
  }
  return domainContested(type, v);
}

Condition domainRegistered(const View& v) {
  if (auto problem =
          bindingProblem(md::kDomainRegistered, v, "no reuse domain is registered for its roles")) {
    return *problem;
  }
  const Condition* granted = api::findCondition(v.binding()->status.conditions, b::kQuotaGranted);
  if (granted == nullptr || granted->status == api::kConditionUnknown) {
    return notObserved(md::kDomainRegistered, v, granted,
                       "whether the reuse domain " + v.domain() +
                           " is in the store's tenant "
                           "ledger");
  }
  if (granted->status == api::kConditionTrue && granted->reason == b::kReasonUnenforced) {
    return makeCondition(
        md::kDomainRegistered, api::kConditionTrue, md::kReasonNoTenantLedger,
        "the store behind KVCachePool " + v.pool() +
            " keeps no tenant ledger (multi-tenancy "
            "is off), so there is nothing to register: the engines are given no tenant id and "
            "every write lands in the store's default tenant, shared with every other workload on "
            "it");
  }
  if (granted->status == api::kConditionFalse && granted->reason == b::kReasonNoLedgerEntry) {
    return makeCondition(md::kDomainRegistered, api::kConditionFalse,
                         md::kReasonDomainNotRegistered,
                         "the reuse domain " + v.domain() + " of " + v.binding_ref +
                             " is not in the store's tenant ledger, so the master refuses every "
                             "write under it (TENANT_NOT_REGISTERED). Fix: read the conditions "
                             "QuotaLedgerAvailable and QuotaPolicyWritable of KVCachePool " +
                             v.pool() + " (kubectl describe kvcp " + v.binding()->spec.pool_ref +
                             "). " + saidBy(v, *granted));
  }
  return makeCondition(md::kDomainRegistered, api::kConditionTrue, md::kReasonRegistered,
                       "the reuse domain " + v.domain() + " of " + v.binding_ref +
                           " is in the tenant ledger of the store behind KVCachePool " + v.pool());
}

Condition quotaReserved(const View& v) {
  if (auto problem = bindingProblem(md::kQuotaReserved, v, "no quota is reserved for its roles")) {
    return *problem;
  }
  const api::KVCachePoolBinding& binding = *v.binding();
  const Condition* granted = api::findCondition(binding.status.conditions, b::kQuotaGranted);
  if (granted == nullptr) {
    return notObserved(md::kQuotaReserved, v, nullptr, "the grant of its reuse domain");
  }
  const std::string ceiling = "spec.quota.ceiling " + binding.spec.quota_ceiling;
  if (granted->reason == b::kReasonGranted && granted->status == api::kConditionTrue) {
    std::string message = v.binding_ref + " is granted ";
    message += binding.status.effective_quota ? bytesText(*binding.status.effective_quota)
                                              : std::string("a quota");
    message += " for the reuse domain " + v.domain() + " (" +
               (binding.status.effective_quota ? "status.effectiveQuota; " : "") + ceiling + ")";
    if (binding.status.effective_quota) {
      if (auto asked = parseQuantityBytes(binding.spec.quota_ceiling);
          asked.ok() && *binding.status.effective_quota < *asked) {
        message += ": the store recut the ceilings of KVCachePool " + v.pool() +
                   " in proportion to what each Binding asks (see the pool's QuotaWithinTotal)";
      }
    }
    return makeCondition(md::kQuotaReserved, api::kConditionTrue, md::kReasonGranted,
                         std::move(message));
  }
  if (granted->reason == b::kReasonUnenforced && granted->status == api::kConditionTrue) {
    return makeCondition(md::kQuotaReserved, api::kConditionTrue, md::kReasonUnenforced,
                         "the store behind KVCachePool " + v.pool() +
                             " keeps no tenant ledger, so the " + ceiling + " of " + v.binding_ref +
                             " is not enforced and nothing is reserved per "
                             "domain: writes share the store's default tenant");
  }
  if (granted->reason == b::kReasonZeroGranted && granted->status == api::kConditionFalse) {
    return makeCondition(md::kQuotaReserved, api::kConditionFalse, md::kReasonZeroGranted,
                         "the store grants the reuse domain " + v.domain() + " of " +
                             v.binding_ref + " nothing (status.effectiveQuota 0, " + ceiling +
                             "), so the engines find no room to store blocks. Fix: read the "
                             "CapacityAllocatable condition of KVCachePool " +
                             v.pool() + " (kubectl describe kvcp " + binding.spec.pool_ref +
                             "): NothingToAllocate means no store member has mounted yet (a "
                             "restarted master takes about 30 s to remount); otherwise the "
                             "proportional recut left this domain no share — lower the ceilings "
                             "of other Bindings on the pool or raise its spec.quota.total");
  }
  if (granted->reason == b::kReasonNoLedgerEntry && granted->status == api::kConditionFalse) {
    return makeCondition(md::kQuotaReserved, api::kConditionFalse, md::kReasonDomainNotRegistered,
                         "the reuse domain " + v.domain() + " of " + v.binding_ref +
                             " is not in the store's tenant ledger, so no quota is reserved for "
                             "it; see DomainRegistered");
  }
  if (granted->reason == b::kReasonGrantNotExported) {
    return makeCondition(md::kQuotaReserved, api::kConditionUnknown, md::kReasonGrantNotExported,
                         "the grant of the reuse domain " + v.domain() + " of " + v.binding_ref +
                             " is not known. " + saidBy(v, *granted));
  }
  if (granted->status == api::kConditionUnknown) {
    return notObserved(md::kQuotaReserved, v, granted, "the grant of its reuse domain");
  }
  return makeCondition(md::kQuotaReserved, granted->status,
                       granted->reason.empty() ? md::kReasonNotObserved : granted->reason,
                       saidBy(v, *granted));
}

// ---------------------------------------------------------------------------------------------
// CacheAttached.

constexpr std::string_view kNoConnector = "the roles run with no connector to the shared cache";

Condition refused(const View& v, const Refusal& refusal) {
  const std::string pool = v.pool();
  const std::string of = "KVCachePool " + pool + " (spec.poolRef of " + v.binding_ref + ")";
  switch (refusal.reason) {
    case RefusalReason::BindingNotFound:
      return bindingNotFound(md::kCacheAttached, v, kNoConnector);
    case RefusalReason::BindingTerminating:
      return bindingDeleting(md::kCacheAttached, v, kNoConnector);
    case RefusalReason::PoolNotFound:
      return makeCondition(md::kCacheAttached, api::kConditionFalse, md::kReasonPoolNotFound,
                           of + " does not exist, so " + std::string(kNoConnector) +
                               ". Fix: create the pool. A Binding's spec.poolRef is immutable "
                               "and spec.kvCache is frozen, so using another pool takes a new "
                               "Binding and a new ModelDeployment");
    case RefusalReason::LedgerNotAvailable:
      return makeCondition(
          md::kCacheAttached, api::kConditionFalse, md::kReasonLedgerNotAvailable,
          of +
              " does not report its tenant ledger available (QuotaLedgerAvailable is not True), "
              "so the reuse domain " +
              v.domain() + " cannot be served and " + std::string(kNoConnector) +
              ". Fix: read that condition (kubectl describe kvcp " +
              (v.binding() ? v.binding()->spec.pool_ref : std::string()) +
              ") and restore the store's master; the roles are rendered with the connector, and "
              "roll, once the pool reports it True");
    case RefusalReason::PoolNamesNoBackend:
    case RefusalReason::BackendNotFound:
      return makeCondition(md::kCacheAttached, api::kConditionFalse, md::kReasonBackendNotFound,
                           std::string(kNoConnector) + ": " + refusal.message);
    case RefusalReason::ClientEndpointMissing:
      return makeCondition(
          md::kCacheAttached, api::kConditionFalse, md::kReasonPoolUnreachable,
          of +
              " has published no client endpoint (its status.clientEndpoint is empty), so the "
              "store cannot be reached and " +
              std::string(kNoConnector) +
              ". Fix: read the pool's BackendResolved condition and its backend's "
              "LeaderAvailable; the roles are rendered with the connector, and roll, once the "
              "pool reports status.clientEndpoint");
    case RefusalReason::TransportUnsupported:
    case RefusalReason::TransportMixed:
      return makeCondition(md::kCacheAttached, api::kConditionFalse,
                           md::kReasonTransportUnsupported,
                           std::string(kNoConnector) + ": " + refusal.message);
    default:
      return makeCondition(md::kCacheAttached, api::kConditionFalse, md::kReasonBindingNotResolved,
                           v.binding_ref + " could not be resolved (" +
                               std::string(refusalReasonName(refusal.reason)) + "), so " +
                               std::string(kNoConnector) + ": " + refusal.message);
  }
}

std::string notJudged(const View& v) {
  if (v.unmanaged.empty()) {
    return "";
  }
  return "; role " + api::nameList(v.unmanaged) +
         " sets roles[].command, so the operator gives it no connector and does not judge it";
}

Condition cacheAttached(const View& v, const Condition& registered) {
  const ModelDeploymentFacts& f = v.facts;
  if (v.managed.empty()) {
    return makeCondition(
        md::kCacheAttached, api::kConditionUnknown, md::kReasonUnmanaged,
        "every role of " + v.self + " (" + api::nameList(v.unmanaged) +
            ") sets roles[].command, so the operator renders no connector and cannot tell "
            "whether the engine uses the cache of " +
            v.binding_ref +
            ". To have the operator attach the roles, create the ModelDeployment without "
            "roles[].command (the field is frozen)");
  }
  if (f.render_error) {
    return makeCondition(md::kCacheAttached, api::kConditionFalse, md::kReasonRenderFailed,
                         "the roles of " + v.self +
                             " could not be rendered, so nothing was "
                             "applied: " +
                             api::boundDetail(*f.render_error) +
                             ". Fix the field the error names; the running Deployments keep "
                             "their last template meanwhile, and whether it carries a connector "
                             "is not judged");
  }
  if (v.binding() == nullptr) {
    return bindingNotFound(md::kCacheAttached, v, kNoConnector);
  }
  if (f.refusal) {
    return refused(v, *f.refusal);
  }
  if (v.binding()->metadata.deleting) {
    return bindingDeleting(md::kCacheAttached, v, kNoConnector);
  }
  if (!f.resolution || f.resolution->master_address.empty()) {
    return refused(v, Refusal{RefusalReason::ClientEndpointMissing, ""});
  }
  const Resolution& r = *f.resolution;
  std::vector<std::string> bare;
  for (const std::string& name : v.managed) {
    const ModelDeploymentRoleFacts* role = v.role(name);
    if (role == nullptr || !role->rendered_hash || !role->attached) {
      bare.push_back(name);
    }
  }
  if (!bare.empty()) {
    return makeCondition(md::kCacheAttached, api::kConditionFalse, md::kReasonNotAttached,
                         "the managed role(s) " + api::nameList(bare) + " of " + v.self +
                             " are rendered with no connector although " + v.binding_ref +
                             " resolves to KVCachePool " + inQuotes(r.pool) + " at " +
                             r.master_address + ": the operator's log says why");
  }
  if (registered.status == api::kConditionFalse) {
    return makeCondition(md::kCacheAttached, api::kConditionFalse, md::kReasonDomainNotRegistered,
                         "the roles are rendered with the connector, but the store refuses "
                         "writes under the reuse domain " +
                             v.domain() + " (DomainRegistered is False, " + registered.reason +
                             "), so nothing is cached: see DomainRegistered");
  }
  std::vector<std::string> pending;
  for (const std::string& name : v.managed) {
    const RoleDeploymentObservation* live = v.live(name);
    const std::string workload = "Deployment " + inQuotes(workloadName(v, name));
    if (live == nullptr) {
      pending.push_back(workload + " does not exist yet");
    } else if (live->pod_spec_hash != *v.role(name)->rendered_hash) {
      pending.push_back(workload + " does not carry the rendered template yet");
    }
  }
  if (!pending.empty()) {
    return makeCondition(md::kCacheAttached, api::kConditionFalse, md::kReasonNotApplied,
                         "the connector is rendered, but " + commaList(pending) +
                             ". The operator applies it on every pass; if this persists, the "
                             "Events of " +
                             v.self + " and the operator's log name the error");
  }
  const api::ReuseDomain& d = v.binding()->spec.domain;
  return makeCondition(md::kCacheAttached, api::kConditionTrue, md::kReasonAttached,
                       "every managed role (" + api::nameList(v.managed) +
                           ") is rendered with the Mooncake connector to KVCachePool " +
                           inQuotes(r.pool) + " at " + r.master_address + " (" +
                           (r.protocol.empty() ? "tcp" : r.protocol) + ") through " +
                           v.binding_ref + ", reuse domain " + inQuotes(d.name) + " (" + d.dtype +
                           ", block size " + std::to_string(d.block_size) + ")" + notJudged(v));
}

// ---------------------------------------------------------------------------------------------
// ReplicasUpToDate and RoleKindsReady.

std::int64_t desiredReplicas(const api::ModelDeploymentRole& role) { return role.replicas; }

Condition replicasUpToDate(const View& v) {
  if (v.facts.render_error) {
    return makeCondition(md::kReplicasUpToDate, api::kConditionUnknown, md::kReasonRenderFailed,
                         "the roles of " + v.self +
                             " could not be rendered: " + api::boundDetail(*v.facts.render_error) +
                             ". Fix the field the error names; nothing is applied until then, "
                             "and the running Deployments keep their last template, so whether "
                             "the replicas are up to date is not known");
  }
  std::vector<std::string> not_applied;
  std::vector<std::string> rolling;
  std::vector<std::string> done;
  for (const api::ModelDeploymentRole& role : v.md.spec.roles) {
    const std::int64_t desired = desiredReplicas(role);
    const std::string workload = "Deployment " + inQuotes(workloadName(v, role.name));
    const ModelDeploymentRoleFacts* facts = v.role(role.name);
    const RoleDeploymentObservation* live = v.live(role.name);
    if (live == nullptr) {
      not_applied.push_back(workload + " does not exist yet");
      continue;
    }
    if (facts == nullptr || !facts->rendered_hash) {
      not_applied.push_back(workload + " was not rendered");
      continue;
    }
    if (live->pod_spec_hash != *facts->rendered_hash) {
      not_applied.push_back(
          workload + " runs a Pod template other than the rendered one (" +
          std::string(kPodSpecHashAnnotation) + " " +
          (live->pod_spec_hash.empty() ? std::string("absent") : live->pod_spec_hash) +
          ", rendered " + *facts->rendered_hash + ")");
      continue;
    }
    if (live->spec_replicas != desired) {
      not_applied.push_back(workload + " asks for " + std::to_string(live->spec_replicas) +
                            " replicas, roles[].replicas " + std::to_string(desired));
      continue;
    }
    if (!live->observed_generation || *live->observed_generation < live->generation) {
      rolling.push_back("the Deployment controller has not observed generation " +
                        std::to_string(live->generation) + " of " + workload + " yet");
      continue;
    }
    const std::int64_t updated = live->updated_replicas.value_or(0);
    const std::int64_t total = live->replicas.value_or(0);
    if (updated < desired) {
      rolling.push_back(workload + ": " + std::to_string(updated) + " of " +
                        plural(desired, "replica") + " run the current template");
      continue;
    }
    if (total > updated) {
      rolling.push_back(workload + ": " + plural(total - updated, "Pod") +
                        " of an older template left");
      continue;
    }
    done.push_back(role.name + " " + std::to_string(updated) + "/" + std::to_string(desired));
  }
  if (!not_applied.empty()) {
    std::vector<std::string> all = not_applied;
    all.insert(all.end(), rolling.begin(), rolling.end());
    return makeCondition(md::kReplicasUpToDate, api::kConditionFalse, md::kReasonNotApplied,
                         api::nameList(all) +
                             ". The operator applies the rendered Deployments on every pass; if "
                             "this persists, the Events of " +
                             v.self + " and the operator's log name the error");
  }
  if (!rolling.empty()) {
    return makeCondition(md::kReplicasUpToDate, api::kConditionFalse, md::kReasonRolloutInProgress,
                         "rolling out: " + api::nameList(rolling) +
                             ". Each role replaces one replica at a time (maxUnavailable 1, no "
                             "surge); a rollout that stalls shows in the role's Pods (kubectl -n " +
                             v.namespace_name +
                             " get pods -l app.kubernetes.io/instance=" + v.md.metadata.name + ")");
  }
  return makeCondition(md::kReplicasUpToDate, api::kConditionTrue, md::kReasonUpToDate,
                       "every replica runs the current template: " + commaList(done));
}

std::int64_t readyOf(const View& v, const std::string& role) {
  const RoleDeploymentObservation* live = v.live(role);
  return live != nullptr ? live->ready_replicas.value_or(0) : 0;
}

Condition roleKindsReady(const View& v) {
  std::vector<std::string> kinds;  // in the order they first appear
  for (const api::ModelDeploymentRole& role : v.md.spec.roles) {
    if (std::find(kinds.begin(), kinds.end(), role.kind) == kinds.end()) {
      kinds.push_back(role.kind);
    }
  }
  std::vector<std::string> ready;
  std::vector<std::string> missing;
  std::vector<std::string> missing_roles;
  for (const std::string& kind : kinds) {
    std::int64_t sum = 0;
    std::vector<std::string> names;
    std::vector<std::string> detail;
    for (const api::ModelDeploymentRole& role : v.md.spec.roles) {
      if (role.kind != kind) {
        continue;
      }
      const std::int64_t n = readyOf(v, role.name);
      sum += n;
      names.push_back(role.name);
      detail.push_back(
          "role " + role.name + ": " +
          (v.live(role.name) == nullptr ? std::string("no Deployment yet")
           : !v.live(role.name)->ready_replicas
               ? std::string("its Deployment has not reported yet")
               : std::to_string(n) + " of " + std::to_string(role.replicas) + " ready"));
    }
    if (sum > 0) {
      ready.push_back(kind + " " + std::to_string(sum));
    } else {
      missing.push_back(kind + " (" + commaList(detail, "") + ")");
      missing_roles.insert(missing_roles.end(), names.begin(), names.end());
    }
  }
  if (!missing.empty()) {
    const bool pair = std::find(kinds.begin(), kinds.end(), api::kRoleKindPrefill) != kinds.end() &&
                      std::find(kinds.begin(), kinds.end(), api::kRoleKindDecode) != kinds.end();
    std::string message = "no replica is ready for the role kind " + commaList(missing, "");
    if (pair) {
      message +=
          "; a prefill/decode deployment serves only while both kinds have a ready "
          "replica";
    }
    std::string components;
    for (const std::string& role : missing_roles) {
      components += (components.empty() ? "" : ",") + role;
    }
    message += ". Read the Pods: kubectl -n " + v.namespace_name +
               " get pods -l app.kubernetes.io/instance=" + v.md.metadata.name +
               ",app.kubernetes.io/component" +
               (missing_roles.size() == 1 ? "=" + components : " in (" + components + ")");
    return makeCondition(md::kRoleKindsReady, api::kConditionFalse, md::kReasonKindNotReady,
                         std::move(message));
  }
  return makeCondition(md::kRoleKindsReady, api::kConditionTrue, md::kReasonKindsReady,
                       "every role kind has a ready replica: " + commaList(ready));
}

// ---------------------------------------------------------------------------------------------
// The phase.

// The condition that makes the deployment Degraded by itself, or nullptr.
const Condition* fault(const std::vector<Condition>& conditions) {
  const Condition* replicas = api::findCondition(conditions, md::kReplicasUpToDate);
  if (replicas != nullptr && replicas->reason == md::kReasonRenderFailed) {
    return replicas;
  }
  const Condition* attached = api::findCondition(conditions, md::kCacheAttached);
  if (attached != nullptr && attached->status == api::kConditionFalse &&
      attached->reason != md::kReasonNotApplied) {
    return attached;
  }
  for (std::string_view type : {md::kDomainRegistered, md::kQuotaReserved}) {
    const Condition* c = api::findCondition(conditions, type);
    if (c != nullptr && c->status == api::kConditionFalse) {
      return c;
    }
  }
  return nullptr;
}

std::optional<std::int64_t> previousReady(const api::ModelDeployment::Status& previous,
                                          const std::string& role) {
  for (const api::ModelDeploymentRoleStatus& r : previous.roles) {
    if (r.name == role) {
      return r.ready_replicas;
    }
  }
  return std::nullopt;
}

std::string deletingMessage(const View& v) {
  std::vector<std::string> left;
  for (const api::ModelDeploymentRole& role : v.md.spec.roles) {
    if (v.live(role.name) != nullptr) {
      left.push_back(workloadName(v, role.name));
    }
  }
  const bool holds = v.md.spec.kv_cache.has_value();
  if (left.empty() && v.facts.pods_left == 0) {
    return v.self + " is being deleted: its Deployments and Pods are gone" +
           (holds ? ", so its entry in the status.usedBy of " + v.binding_ref +
                        " is removed and the Binding is no longer held by it"
                  : std::string());
  }
  std::string waiting;
  if (!left.empty()) {
    waiting = "Deployment " + api::nameList(left);
  }
  if (v.facts.pods_left > 0) {
    waiting +=
        (waiting.empty() ? "" : " and ") + plural(v.facts.pods_left, "Pod") + " of its roles";
  }
  return v.self + " is being deleted: waiting for " + waiting + " to go" +
         (holds ? "; until then it stays in the status.usedBy of " + v.binding_ref +
                      ", whose reuse domain its Pods may still write under"
                : std::string());
}

void setPhase(api::ModelDeployment::Status& status, const View& v) {
  const api::ModelDeployment::Status& previous = v.md.status;
  if (const Condition* c = fault(status.conditions)) {
    status.phase = std::string(api::kPhaseDegraded);
    status.phase_message = c->message;
    return;
  }
  std::vector<std::string> short_roles;
  bool lost = false;
  for (const api::ModelDeploymentRole& role : v.md.spec.roles) {
    const std::int64_t ready = readyOf(v, role.name);
    if (ready < desiredReplicas(role)) {
      short_roles.push_back(role.name + " " + std::to_string(ready) + " of " +
                            std::to_string(desiredReplicas(role)));
      const auto before = previousReady(previous, role.name);
      lost = lost || (before && *before > ready);
    }
  }
  const Condition* up_to_date = api::findCondition(status.conditions, md::kReplicasUpToDate);
  const bool current = up_to_date != nullptr && up_to_date->status == api::kConditionTrue;
  if (short_roles.empty() && current) {
    status.phase = std::string(api::kPhaseReady);
    status.phase_message = "every replica is ready and runs the current template" +
                           std::string(api::isConditionTrue(status.conditions, md::kCacheAttached)
                                           ? ", attached to the shared cache"
                                           : "");
    return;
  }
  if (!current) {
    status.phase = std::string(api::kPhaseStarting);
    status.phase_message = up_to_date != nullptr ? up_to_date->message : std::string();
    return;
  }
  const bool was_ready = previous.phase == api::kPhaseReady;
  const bool was_lost =
      previous.phase == api::kPhaseDegraded && fault(previous.conditions) == nullptr;
  const std::string ready_text = "ready replicas per role: " + commaList(short_roles);
  if ((was_ready && lost) || was_lost) {
    status.phase = std::string(api::kPhaseDegraded);
    status.phase_message = "replicas were lost after " + v.self + " was ready (" + ready_text +
                           "). Read the Pods and their Events: kubectl -n " + v.namespace_name +
                           " get pods -l app.kubernetes.io/instance=" + v.md.metadata.name;
    return;
  }
  status.phase = std::string(api::kPhaseStarting);
  status.phase_message = "waiting for replicas to become ready (" + ready_text + ")";
}

// status.roles[].
std::vector<api::ModelDeploymentRoleStatus> roleStatuses(const View& v) {
  std::vector<api::ModelDeploymentRoleStatus> out;
  for (const api::ModelDeploymentRole& role : v.md.spec.roles) {
    api::ModelDeploymentRoleStatus entry;
    entry.name = role.name;
    entry.kind = role.kind;
    if (const RoleDeploymentObservation* live = v.live(role.name)) {
      entry.replicas = live->replicas;
      entry.ready_replicas = live->ready_replicas;
      entry.updated_replicas = live->updated_replicas;
    }
    if (role.command) {
      entry.unmanaged = true;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// status.kvCache: what resolved, and nothing that did not.
std::optional<api::KVCacheAttachmentStatus> attachmentEcho(const View& v) {
  if (!v.md.spec.kv_cache || v.binding() == nullptr) {
    return std::nullopt;
  }
  const api::KVCachePoolBinding& binding = *v.binding();
  api::KVCacheAttachmentStatus out;
  out.binding = binding.metadata.name;
  bool pool_reached = v.facts.resolution.has_value();
  if (v.facts.refusal) {
    switch (v.facts.refusal->reason) {
      case RefusalReason::LedgerNotAvailable:
      case RefusalReason::PoolNamesNoBackend:
      case RefusalReason::BackendNotFound:
      case RefusalReason::ClientEndpointMissing:
      case RefusalReason::TransportUnsupported:
      case RefusalReason::TransportMixed:
        pool_reached = true;
        break;
      default:
        pool_reached = false;
    }
  }
  if (pool_reached) {
    out.pool = v.facts.resolution && !v.facts.resolution->pool.empty() ? v.facts.resolution->pool
                                                                       : binding.spec.pool_ref;
  }
  api::AttachedDomain domain;
  domain.name = binding.spec.domain.name;
  if (binding.spec.domain.block_size > 0) {
    domain.block_size = binding.spec.domain.block_size;
  }
  domain.dtype = binding.spec.domain.dtype;
  out.domain = std::move(domain);
  return out;
}

}  // namespace

RoleDeploymentObservation observeRoleDeployment(const Json& deployment) {
  RoleDeploymentObservation out;
  out.generation = integerAt(deployment, "/metadata/generation").value_or(0);
  out.spec_replicas = integerAt(deployment, "/spec/replicas").value_or(1);
  out.observed_generation = integerAt(deployment, "/status/observedGeneration");
  if (out.observed_generation) {
    out.replicas = integerAt(deployment, "/status/replicas").value_or(0);
    out.updated_replicas = integerAt(deployment, "/status/updatedReplicas").value_or(0);
    out.ready_replicas = integerAt(deployment, "/status/readyReplicas").value_or(0);
    out.available_replicas = integerAt(deployment, "/status/availableReplicas").value_or(0);
  }
  if (deployment.is_object()) {
    const Json annotations =
        deployment.value(Json::json_pointer("/spec/template/metadata/annotations"), Json::object());
    if (annotations.is_object()) {
      const Json hash = annotations.value(std::string(kPodSpecHashAnnotation), Json());
      if (hash.is_string()) {
        out.pod_spec_hash = hash.get<std::string>();
      }
    }
  }
  return out;
}

api::ModelDeployment::Status modelDeploymentStatus(const ModelDeploymentFacts& facts,
                                                   std::int64_t generation, std::string_view now) {
  const View v(facts);
  api::ModelDeployment::Status status = v.md.status;
  status.observed_generation = generation;
  status.roles = roleStatuses(v);
  status.endpoint = facts.endpoint;

  if (v.md.metadata.deleting) {
    status.phase = std::string(api::kPhaseDeleting);
    status.phase_message = deletingMessage(v);
    return status;
  }

  status.kv_cache = attachmentEcho(v);
  std::vector<Condition> desired;
  if (v.md.spec.kv_cache) {
    const Condition registered = domainRegistered(v);
    desired.push_back(registered);
    desired.push_back(quotaReserved(v));
    desired.push_back(cacheAttached(v, registered));
  }
  desired.push_back(replicasUpToDate(v));
  desired.push_back(roleKindsReady(v));
  api::setConditions(status.conditions, desired,
                     {md::kDomainRegistered, md::kQuotaReserved, md::kCacheAttached,
                      md::kReplicasUpToDate, md::kRoleKindsReady},
                     generation, now);
  setPhase(status, v);
  return status;
}

std::vector<ModelDeploymentEvent> modelDeploymentEvents(const api::ModelDeployment::Status& before,
                                                        const api::ModelDeployment::Status& after) {
  std::vector<ModelDeploymentEvent> out;
  const Condition* now = api::findCondition(after.conditions, md::kReplicasUpToDate);
  if (now == nullptr || now->reason != md::kReasonRenderFailed) {
    return out;
  }
  const Condition* was = api::findCondition(before.conditions, md::kReplicasUpToDate);
  if (was != nullptr && was->reason == md::kReasonRenderFailed && was->message == now->message) {
    return out;
  }
  out.push_back({"Warning", std::string(md::kEventRenderFailed), now->message});
  return out;
}

api::ObjectReference bindingUsedByEntry(std::string_view deployment) {
  return {std::string(api::kKindModelDeployment), "", std::string(deployment)};
}

bool workloadsGone(const ModelDeploymentFacts& facts) {
  if (facts.pods_left > 0) {
    return false;
  }
  return std::none_of(facts.roles.begin(), facts.roles.end(),
                      [](const ModelDeploymentRoleFacts& r) { return r.deployment.has_value(); });
}

bool holdsBinding(const ModelDeploymentFacts& facts) {
  const api::ModelDeployment& md = facts.deployment;
  if (!md.spec.kv_cache) {
    return false;
  }
  return !(md.metadata.deleting && workloadsGone(facts));
}

bool setBindingUsedBy(std::vector<api::ObjectReference>& used_by, std::string_view deployment,
                      bool hold) {
  const api::ObjectReference entry = bindingUsedByEntry(deployment);
  const bool present = std::find(used_by.begin(), used_by.end(), entry) != used_by.end();
  if (hold && !present) {
    used_by.push_back(entry);
    std::sort(used_by.begin(), used_by.end());
    used_by.erase(std::unique(used_by.begin(), used_by.end()), used_by.end());
    return true;
  }
  if (!hold && present) {
    std::erase(used_by, entry);
    return true;
  }
  return false;
}

}  // namespace kvc::policy
