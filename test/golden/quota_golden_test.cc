// The quota corpus: the pure status and decision functions of the quota half (policy layer) and
// the validating admission of our kinds, one YAML input per case under
// test/golden/quota/<area>/NNN-behaviour.yaml, each compared with its .golden next to it.
// KVC_UPDATE_GOLDEN=1 rewrites the goldens; a golden without an input fails the run, and so does
// an input key the area's schema does not know.
//
// Byte figures in inputs are an integer or a quantity ("8Gi"). `now` defaults to
// 2025-06-01T12:00:00Z and `generation` to the object's metadata.generation (what the
// controllers pass). status.observedGeneration is stamped by the status writer, not by these
// functions, so the goldens show whatever the previous status carried.
//
// binding-status  (policy::bindingStatus and policy::bindingReleased)
//   binding:  a whole KVCachePoolBinding (api::bindingFromJson): metadata (deletionTimestamp,
//             finalizers), spec, and the status as last written
//   facts:    {backend, contestedWith: [ns/name], holders: [Kind/name],
//              admissionWindowCloses: RFC 3339, nothingOwed, domainClaimedElsewhere,
//              goneUsers: [ModelDeployment name], use: the engine Pods, see bindingUse}
//   reading:  the MasterReading, see below
//   golden:   {"status": bindingStatusToJson(...), "bindingReleased": bool}
//
// pool-status  (policy::poolStatus)
//   pool:     a whole KVCachePool (api::poolFromJson), previous status included
//   facts:    {resolution: NotSingular|NotFound|EndpointsNotPublished|Resolved,
//              backend (default: spec.backends[0]), clientEndpoint,
//              bindings: [whole KVCachePoolBinding objects], contestedDomains: [domain],
//              holdingBindings: [ns/name]}
//   reading:  the MasterReading, see below
//   golden:   poolStatusToJson(...)
//
// The MasterReading of binding-status and pool-status:
//   reading: {adminAddress, ledger: NoLedger|Unreachable|Read (default Unreachable),
//             declaredSingleTenant, tenants: [{id, requested, explicit (default false),
//             effective (the ledger's grant, default 0)}],
//             ledgerError, persistError, retained: [domain], removalErrors: {domain: message},
//             scraped, scrapeError, allocatable, totalCapacity,
//             tenantFigures: {domain: {requested, effective, occupancy, overQuota,
//                                      explicitPolicy}},   (each absent unless given)
//             inFlight}
//
// pool-plan  (policy::planPool: one pool pass decided, STYLE.md §15)
//   pool:      a whole KVCachePool (metadata — finalizers, deletionTimestamp —, spec, status)
//   bindings:  [whole KVCachePoolBinding objects]   the pool's own Bindings
//   backend:   the whole KVCacheBackend spec.backends[0] names (status.endpoints, usedBy);
//              absent or null: not found
//   siblings:  [whole KVCachePool objects]          the other pools on the same backend
//   siblingBindings: [whole KVCachePoolBinding objects]   their Bindings
//              (the pool and its Bindings join these on the master when the backend resolves)
//   holds:     {ns/name: {holders: [Kind/name], goneUsers: [name], windowLeft: seconds,
//                         windowCloses: RFC 3339}}   what holds each deleting Binding
//   reading:   the MasterReading, see below (default: unread)
//   ledgerWritten: {written: [domain], before: [{id, requested, explicit, effective}]}
//              present for the pass's report stage, after ledger writes: what they did (and
//              `reading` is then the master as they left it). Absent: the ledger stage is planned
//              from `reading`; when it writes nothing, the report stage follows on the same
//              reading and the golden shows both
//   operatorNamespace (default gpustack-system), resync (seconds, default 30), now
//   golden:    the plan: the guards (pool finalizer, backend claim, Binding finalizers), the
//              ledger writes, the ripple, the tenant-quota policy ConfigMap, the Bindings
//              released and each status written, the pool released or its status, the store
//              failure and the requeue
//
// backend-plan  (policy::planExternalBackend or policy::planManagedBackend, by the backend's
//                connection: one backend pass decided, STYLE.md §15)
//   backend:   a whole KVCacheBackend (metadata — finalizers, deletionTimestamp —, spec, status
//              with usedBy)
//   gone:      [pool]   the pools of usedBy definitely gone (a live NotFound)
//   reading:   as backend-status (external: adminAddress defaults to the spec's Admin endpoint;
//              managed: to the managed one; present exactly when the observer reads the master:
//              an image resolves or the leader Deployment exists)
//   now
//   external only:
//     writtenConsumers: [pool]   present for the pass's second plan: the pools the written
//                                status named
//   managed only:
//     namespace (default gpustack-system), settingsImage (default: the Setting's default; ""
//     for a cleared Setting)
//     facts:     {leaderDeployment, leaderPods, podsUnreadable, groups, lease}, as in
//                managed-backend-status (the leader Deployment is also what the render reads)
//     roleBindings: {name: {uid, roleRef, ours}}   the election RoleBindings as they are
//     roleBindingsError: why one could not be read (Unavailable)
//     handover:  the holder of the leader handover baseline ("" for a baseline without one;
//                absent: none)
//     converged: {} or {error: message (FailedPrecondition)}   present for the pass's second
//                plan: what the converge writes did
//   golden:    external: {addFinalizer, status, release, next}; managed: {addFinalizer,
//              replaceRoleBindings, apply (each rendered object named, with its role and group),
//              tenantPolicySeed (the ConfigMap created when absent, multi-tenancy only),
//              staleMembers, renderFailed, handover {baseline, forget, event}, status,
//              tierNotEmptyEvent, failure, next}
//
// teardown-plan  (policy::planTeardown: one teardown pass of a managed backend decided)
//   backend:   a whole managed KVCacheBackend, being deleted
//   gone, namespace, settingsImage, now: as in backend-plan
//   children:  [{object: a store object carrying the backend's note (its kind names its
//               resource), deletingFor: seconds since its deletion began (absent: not deleting)}]
//   storePods: [Pod]   the store's own Pods left
//   tiers:     [{group, nodes: [Node], cleaners: [Pod]}]   each cleanAfterDelete group: the Nodes
//              it selects and its cleanup Pods (only once no child and no store Pod is left)
//   otherBackends: [whole KVCacheBackend objects]   whose tiers may share a path
//   golden:    {deleteInForeground, workloadNotTerminated, deleteLease, createCleaners,
//              nodeEvents, release, removeFinalizer, where, status, next}
//
// backend-status  (policy::externalBackendStatus)
//   backend:  a whole external KVCacheBackend (api::backendFromJson), previous status included
//   facts:    {consumers: [pool], droppedStale}
//   reading:  {adminAddress (default: the spec's Admin endpoint; "" for none),
//              health: Unreadable|NotServing|Serving (default Unreadable), healthError, role,
//              haState, metricsRead, metricsError, totalCapacity, allocated, totalFileCapacity,
//              allocatedFile, putStart, putEnd, putRevoke,
//              listing: NotRead|Failed|TooLarge|NotServed|Read (default NotRead), listingError,
//              segments: [{segmentID, clientID, segmentName, teEndpoint, protocol, status,
//                          allocatorUsed}]}
//   golden:   backendStatusToJson(...)
//
// managed-backend-status  (policy::managedBackendStatus, policy::tierNotEmptyEvent, and with
//                          facts.teardown policy::teardownStatus)
//   backend:  a whole managed KVCacheBackend, previous status included
//   facts:    {consumers, droppedStale, namespace (default gpustack-system), imageError,
//              publishedLeaderImage (the leader's image when not this project's build),
//              settingsImage (default: the Setting's default), leaderDeployment, leaderPods: [Pod],
//              podsUnreadable: error, groups: [{daemonSet, pods: [{pod, inSurveyWindow,
//              mountFailure}]}], (mountFailure: the note of the kubelet's FailedMount Event about
//              the Pod) lease: {state: Absent|Read|Unreadable (default Absent), holder,
//              transitions, error}, teardown: where a teardown stands}   (Kubernetes objects as
//              JSON, only what is read)
//   reading:  as backend-status; adminAddress defaults to the managed Admin endpoint
//   golden:   {"status": backendStatusToJson(...), "tierNotEmptyEvent": message or null}, or the
//             teardown status alone
//
// ledger-plan  (policy::desiredLedger, then policy::planLedger)
//   claims:     [{domain, binding: ns/name, pool, ceiling, deleting}]
//   observed:   [{id, requested, explicit (default false), effective (default 0)}]   as read
//   registered: [domain]   the domains this operator registered
//   releasable: [domain]   releasing domains whose release is due
//   golden:     {"desired": {tenants, contested, releasing}, "plan": {puts, deletes, held}}
//
// ledger-ripple  (policy::ledgerRipple: the other pools a pass's ledger writes reach)
//   claims:     as in ledger-plan;  written: [domain]   the domains the pass PUT or removed
//   before, after: [{id, requested, explicit, effective}]   the ledger before and after them
//   afterRead (default true): whether the ledger was read back after the writes
//   golden:     {"recut", "pools"}
//
// admission-pool  (policy::admitPool)
//   operation: CREATE|UPDATE, pool: a whole KVCachePool, old: the stored one (UPDATE),
//   backend:   the KVCacheBackend spec.backends[0] names, as looked up; absent or null: NotFound
//   golden:    the verdict (below)
//
// admission-binding  (policy::admitBinding, and policy::ledgerKnowledge)
//   operation: CREATE|UPDATE, binding: a whole KVCachePoolBinding, old: the stored one (UPDATE),
//   dtypeOwned (default true): the Setting model-deployment-kv-cache-dtype-owned,
//   pool:      the KVCachePool as looked up; null: looked up and not found; absent: not looked up
//   backend:   the pool's backend (default: pool.spec.backends[0] when there is exactly one)
//   siblings:  [{binding: ns/name, domain}]   the other Bindings on that backend
//   ledger:    HasLedger|NoLedger|Unknown (default Unknown), or FromPool:
//              ledgerKnowledge(pool, backendObject), the result shown in the golden as "ledger"
//   backendObject: a whole KVCacheBackend, for ledger: FromPool (absent: none)
//   golden:    the verdict (below)
//
// admission-backend  (policy::admitBackend)
//   operation: CREATE|UPDATE,
//   backend:   a whole KVCacheBackend as the API server sends it, kept raw: the policy decodes it
//              itself, so a wrong type or a quantity that does not parse is part of a case,
//   old:       the stored one (UPDATE), its status included (status.usedBy),
//   settingsImage (default: api::kDefaultBackendImage): the Setting kv-cache-backend-image,
//              "" for a cleared one
//   golden:    the verdict (below)
//
// The verdict: {"allowed", "errors": [{type, field, value?, detail}], "invalidMessage" (when
// refused: policy::invalidMessage), "warnings"} (verdict.h).
//
// tenant-policy  (policy::renderPolicyFile and policy::tenantQuotaPolicyConfigMap)
//   backend (default mooncake-dram), namespace (default gpustack-system),
//   tenants: [{name, quota}] or [{nameHex, quota}] for bytes YAML cannot carry (invalid UTF-8)
//   golden:  "# document" and the rendered text, then "# configMap" and the ConfigMap as JSON;
//            or "# error" and the status. A rendered document must read back (parsePolicyFile)
//            to the tenants sorted by name, and the ConfigMap must carry it verbatim.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "golden.h"
#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/pool.h"
#include "kvc/api/settings.h"
#include "kvc/common/quantity.h"
#include "kvc/common/yaml.h"
#include "kvc/policy/admission/backend_admission.h"
#include "kvc/policy/admission/quota_admission.h"
#include "kvc/policy/base/field_error.h"
#include "kvc/policy/quota/binding_status.h"
#include "kvc/policy/quota/master_reading.h"
#include "kvc/policy/quota/pool_plan.h"
#include "kvc/policy/quota/pool_status.h"
#include "kvc/policy/quota/quota_ledger.h"
#include "kvc/policy/quota/tenant_quota_policy.h"
#include "kvc/policy/store/backend_plan.h"
#include "kvc/policy/store/backend_status.h"
#include "kvc/policy/store/managed_backend_status.h"
#include "kvc/policy/store/teardown_plan.h"
#include "verdict.h"

namespace kvc::policy {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = KVC_GOLDEN_QUOTA_DIR;
constexpr const char* kNow = "2025-06-01T12:00:00Z";

// ---------------------------------------------------------------------------------------------
// Reading an input: every helper names the field it could not read.

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void bad(const std::string& where, const std::string& why) {
  throw BadInput(where + ": " + why);
}

std::string at(std::string_view where, std::string_view key) {
  return where.empty() ? std::string(key) : std::string(where) + "." + std::string(key);
}

const Json* field(const Json& object, std::string_view key) {
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

// Refuses keys the schema does not know, so a misspelt fact cannot silently read as absent.
void onlyKeys(const Json& object, std::string_view where,
              std::initializer_list<std::string_view> keys) {
  if (!object.is_object()) {
    bad(std::string(where), "must be a mapping");
  }
  for (const auto& [key, value] : object.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      bad(at(where, key), "is not part of the schema (see quota_golden_test.cc)");
    }
  }
}

Json mapping(const Json& object, std::string_view where, std::string_view key) {
  const Json* value = field(object, key);
  if (value == nullptr || value->is_null()) {
    return Json::object();
  }
  if (!value->is_object()) {
    bad(at(where, key), "must be a mapping");
  }
  return *value;
}

Json list(const Json& object, std::string_view where, std::string_view key) {
  const Json* value = field(object, key);
  if (value == nullptr || value->is_null()) {
    return Json::array();
  }
  if (!value->is_array()) {
    bad(at(where, key), "must be a list");
  }
  return *value;
}

std::string text(const Json& object, std::string_view where, std::string_view key,
                 std::string fallback = "") {
  const Json* value = field(object, key);
  if (value == nullptr || value->is_null()) {
    return fallback;
  }
  if (!value->is_string()) {
    bad(at(where, key), "must be a string");
  }
  return value->get<std::string>();
}

std::optional<std::string> optionalText(const Json& object, std::string_view where,
                                        std::string_view key) {
  if (field(object, key) == nullptr) {
    return std::nullopt;
  }
  return text(object, where, key);
}

std::vector<std::string> texts(const Json& object, std::string_view where, std::string_view key) {
  std::vector<std::string> out;
  const Json items = list(object, where, key);
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      bad(at(where, key) + "[" + std::to_string(i) + "]", "must be a string");
    }
    out.push_back(items[i].get<std::string>());
  }
  return out;
}

bool flag(const Json& object, std::string_view where, std::string_view key, bool fallback = false) {
  const Json* value = field(object, key);
  if (value == nullptr || value->is_null()) {
    return fallback;
  }
  if (!value->is_boolean()) {
    bad(at(where, key), "must be true or false");
  }
  return value->get<bool>();
}

std::optional<std::int64_t> optionalCount(const Json& object, std::string_view where,
                                          std::string_view key) {
  const Json* value = field(object, key);
  if (value == nullptr || value->is_null()) {
    return std::nullopt;
  }
  if (!value->is_number_integer()) {
    bad(at(where, key), "must be an integer");
  }
  return value->get<std::int64_t>();
}

// An integer, or a quantity such as "8Gi".
std::optional<std::int64_t> optionalBytes(const Json& object, std::string_view where,
                                          std::string_view key) {
  const Json* value = field(object, key);
  if (value == nullptr || value->is_null()) {
    return std::nullopt;
  }
  if (value->is_number_integer()) {
    return value->get<std::int64_t>();
  }
  if (value->is_string()) {
    auto bytes = parseQuantityBytes(value->get<std::string>());
    if (!bytes.ok()) {
      bad(at(where, key), bytes.status().message());
    }
    return *bytes;
  }
  bad(at(where, key), "must be bytes (an integer or a quantity such as 8Gi)");
}

std::int64_t bytes(const Json& object, std::string_view where, std::string_view key) {
  auto value = optionalBytes(object, where, key);
  if (!value) {
    bad(at(where, key), "is required");
  }
  return *value;
}

template <typename T>
T choice(const Json& object, std::string_view where, std::string_view key, T fallback,
         const std::map<std::string, T>& names) {
  const Json* value = field(object, key);
  if (value == nullptr || value->is_null()) {
    return fallback;
  }
  const std::string name = text(object, where, key);
  auto it = names.find(name);
  if (it == names.end()) {
    std::string known;
    for (const auto& [spelling, unused] : names) {
      known += (known.empty() ? "" : "|") + spelling;
    }
    bad(at(where, key), "\"" + name + "\" is not one of " + known);
  }
  return it->second;
}

// A whole object decoded with the api decoder (e.g. api::bindingFromJson).
template <typename Decoder>
auto decoded(const Json& value, std::string_view where, Decoder decode) {
  auto result = decode(value);
  if (!result.ok()) {
    bad(std::string(where), result.status().message());
  }
  return std::move(result).value();
}

template <typename Decoder>
auto required(const Json& object, std::string_view key, Decoder decode) {
  const Json* value = field(object, key);
  if (value == nullptr || !value->is_object()) {
    bad(std::string(key), "a whole object is required");
  }
  return decoded(*value, key, decode);
}

std::string nowOf(const Json& input) { return text(input, "", "now", kNow); }

std::int64_t generationOf(const Json& input, const api::ObjectMeta& metadata) {
  return optionalCount(input, "", "generation").value_or(metadata.generation);
}

std::string pretty(const Json& value) { return value.dump(2) + "\n"; }

// "ns/name" split in two.
std::pair<std::string, std::string> namespacedName(const std::string& key, std::string_view where) {
  const auto slash = key.find('/');
  if (slash == std::string::npos) {
    bad(std::string(where), "\"" + key + "\" must be ns/name");
  }
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// ---------------------------------------------------------------------------------------------
// The MasterReading shared by binding-status and pool-status.

MasterReading masterReading(const Json& in) {
  constexpr std::string_view w = "reading";
  onlyKeys(in, w,
           {"adminAddress", "ledger", "declaredSingleTenant", "tenants", "ledgerError",
            "persistError", "retained", "removalErrors", "scraped", "scrapeError", "allocatable",
            "totalCapacity", "tenantFigures", "inFlight"});
  MasterReading r;
  r.admin_address = text(in, w, "adminAddress");
  r.ledger = choice<LedgerState>(in, w, "ledger", LedgerState::Unreachable,
                                 {{"NoLedger", LedgerState::NoLedger},
                                  {"Unreachable", LedgerState::Unreachable},
                                  {"Read", LedgerState::Read}});
  r.declared_single_tenant = flag(in, w, "declaredSingleTenant");
  const Json tenants = list(in, w, "tenants");
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const std::string where = "reading.tenants[" + std::to_string(i) + "]";
    onlyKeys(tenants[i], where, {"id", "requested", "explicit", "effective"});
    r.tenants.push_back({text(tenants[i], where, "id"), bytes(tenants[i], where, "requested"),
                         flag(tenants[i], where, "explicit"),
                         optionalBytes(tenants[i], where, "effective").value_or(0)});
  }
  r.ledger_error = text(in, w, "ledgerError");
  r.persist_error = text(in, w, "persistError");
  r.retained = texts(in, w, "retained");
  const Json removal_errors = mapping(in, w, "removalErrors");
  for (const auto& [domain, message] : removal_errors.items()) {
    if (!message.is_string()) {
      bad("reading.removalErrors." + domain, "must be a string");
    }
    r.removal_errors[domain] = message.get<std::string>();
  }
  r.scraped = flag(in, w, "scraped");
  r.scrape_error = text(in, w, "scrapeError");
  r.allocatable_bytes = optionalBytes(in, w, "allocatable");
  r.total_capacity_bytes = optionalBytes(in, w, "totalCapacity");
  const Json tenant_figures = mapping(in, w, "tenantFigures");
  for (const auto& [domain, figures] : tenant_figures.items()) {
    const std::string where = "reading.tenantFigures." + domain;
    onlyKeys(figures, where,
             {"requested", "effective", "occupancy", "overQuota", "explicitPolicy"});
    TenantFigures f;
    f.requested_bytes = optionalBytes(figures, where, "requested");
    f.effective_bytes = optionalBytes(figures, where, "effective");
    f.occupancy_bytes = optionalBytes(figures, where, "occupancy");
    if (field(figures, "overQuota") != nullptr) {
      f.over_quota = flag(figures, where, "overQuota");
    }
    if (field(figures, "explicitPolicy") != nullptr) {
      f.explicit_policy = flag(figures, where, "explicitPolicy");
    }
    r.tenant_figures[domain] = f;
  }
  r.occupancy_includes_in_flight = flag(in, w, "inFlight");
  return r;
}

// ---------------------------------------------------------------------------------------------
// binding-status

// facts.use: {reading (default true), unusedAfterSeconds (default 600), pods: [{name, engine
// (default vllm), readySeconds, queries?, hits?, unread?, visited (default true)}]} — a Pod
// without queries was not read.
BindingUse bindingUse(const Json& use) {
  onlyKeys(use, "facts.use", {"reading", "unusedAfterSeconds", "pods"});
  BindingUse out;
  out.reading = flag(use, "facts.use", "reading", true);
  out.unused_after =
      std::chrono::seconds(optionalCount(use, "facts.use", "unusedAfterSeconds").value_or(600));
  const Json pods = list(use, "facts.use", "pods");
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const std::string where = "facts.use.pods[" + std::to_string(i) + "]";
    onlyKeys(pods[i], where,
             {"name", "engine", "readySeconds", "queries", "hits", "unread", "visited"});
    EnginePodUse pod;
    pod.name = text(pods[i], where, "name");
    pod.engine = text(pods[i], where, "engine", "vllm");
    pod.ready_seconds = optionalCount(pods[i], where, "readySeconds").value_or(0);
    if (auto queries = optionalCount(pods[i], where, "queries")) {
      pod.counts =
          EngineCounts{double(*queries), double(optionalCount(pods[i], where, "hits").value_or(0))};
    }
    pod.unread = text(pods[i], where, "unread");
    pod.visited = flag(pods[i], where, "visited", true);
    out.pods.push_back(std::move(pod));
  }
  return out;
}

std::string bindingStatusCase(const Json& in) {
  onlyKeys(in, "", {"binding", "facts", "reading", "generation", "now"});
  BindingFacts facts;
  facts.binding = required(in, "binding", api::bindingFromJson);
  const Json f = mapping(in, "", "facts");
  onlyKeys(f, "facts",
           {"backend", "contestedWith", "holders", "admissionWindowCloses", "nothingOwed",
            "domainClaimedElsewhere", "goneUsers", "use"});
  facts.backend = text(f, "facts", "backend");
  if (field(f, "use") != nullptr) {
    facts.use = bindingUse(mapping(f, "facts", "use"));
  }
  facts.contested_with = texts(f, "facts", "contestedWith");
  facts.holders = texts(f, "facts", "holders");
  facts.admission_window_closes = optionalText(f, "facts", "admissionWindowCloses");
  facts.nothing_owed = flag(f, "facts", "nothingOwed");
  facts.domain_claimed_elsewhere = flag(f, "facts", "domainClaimedElsewhere");
  facts.gone_users = texts(f, "facts", "goneUsers");
  const MasterReading reading = masterReading(mapping(in, "", "reading"));

  const auto status =
      bindingStatus(facts, reading, generationOf(in, facts.binding.metadata), nowOf(in));
  return pretty({{"status", api::bindingStatusToJson(status)},
                 {"bindingReleased", bindingReleased(facts, reading)}});
}

// ---------------------------------------------------------------------------------------------
// pool-status

std::string poolStatusCase(const Json& in) {
  onlyKeys(in, "", {"pool", "facts", "reading", "generation", "now"});
  PoolFacts facts;
  facts.pool = required(in, "pool", api::poolFromJson);
  const Json f = mapping(in, "", "facts");
  onlyKeys(f, "facts",
           {"resolution", "backend", "clientEndpoint", "bindings", "contestedDomains",
            "holdingBindings"});
  facts.resolution = choice<BackendResolution>(
      f, "facts", "resolution", BackendResolution::NotFound,
      {{"NotSingular", BackendResolution::NotSingular},
       {"NotFound", BackendResolution::NotFound},
       {"EndpointsNotPublished", BackendResolution::EndpointsNotPublished},
       {"Resolved", BackendResolution::Resolved}});
  facts.backend = text(f, "facts", "backend",
                       facts.pool.spec.backends.empty() ? "" : facts.pool.spec.backends.front());
  facts.client_endpoint = text(f, "facts", "clientEndpoint");
  const Json bindings = list(f, "facts", "bindings");
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    facts.bindings.push_back(
        decoded(bindings[i], "facts.bindings[" + std::to_string(i) + "]", api::bindingFromJson));
  }
  facts.contested_domains = texts(f, "facts", "contestedDomains");
  facts.holding_bindings = texts(f, "facts", "holdingBindings");
  const MasterReading reading = masterReading(mapping(in, "", "reading"));

  return pretty(api::poolStatusToJson(
      poolStatus(facts, reading, generationOf(in, facts.pool.metadata), nowOf(in))));
}

// ---------------------------------------------------------------------------------------------
// backend-status

BackendReading backendReading(const Json& in, const api::KVCacheBackend& backend) {
  constexpr std::string_view w = "reading";
  onlyKeys(in, w,
           {"adminAddress", "health", "healthError", "role", "haState", "metricsRead",
            "metricsError", "totalCapacity", "allocated", "totalFileCapacity", "allocatedFile",
            "putStart", "putEnd", "putRevoke", "listing", "listingError", "segments"});
  BackendReading r;
  r.admin_address =
      text(in, w, "adminAddress",
           api::endpointAddress(backend.spec.external_endpoints, api::kEndpointAdmin));
  r.health = choice<BackendReading::Health>(in, w, "health", BackendReading::Health::Unreadable,
                                            {{"Unreadable", BackendReading::Health::Unreadable},
                                             {"NotServing", BackendReading::Health::NotServing},
                                             {"Serving", BackendReading::Health::Serving}});
  r.health_error = text(in, w, "healthError");
  r.role = text(in, w, "role");
  r.ha_state = text(in, w, "haState");
  r.metrics_read = flag(in, w, "metricsRead");
  r.metrics_error = text(in, w, "metricsError");
  r.total_capacity_bytes = optionalBytes(in, w, "totalCapacity");
  r.allocated_bytes = optionalBytes(in, w, "allocated");
  r.total_file_capacity_bytes = optionalBytes(in, w, "totalFileCapacity");
  r.allocated_file_bytes = optionalBytes(in, w, "allocatedFile");
  r.put_start_total = optionalCount(in, w, "putStart");
  r.put_end_total = optionalCount(in, w, "putEnd");
  r.put_revoke_total = optionalCount(in, w, "putRevoke");
  r.listing = choice<BackendReading::Listing>(in, w, "listing", BackendReading::Listing::NotRead,
                                              {{"NotRead", BackendReading::Listing::NotRead},
                                               {"Failed", BackendReading::Listing::Failed},
                                               {"TooLarge", BackendReading::Listing::TooLarge},
                                               {"NotServed", BackendReading::Listing::NotServed},
                                               {"Read", BackendReading::Listing::Read}});
  r.listing_error = text(in, w, "listingError");
  const Json segments = list(in, w, "segments");
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string where = "reading.segments[" + std::to_string(i) + "]";
    onlyKeys(segments[i], where,
             {"segmentID", "clientID", "segmentName", "teEndpoint", "protocol", "status",
              "allocatorUsed"});
    SegmentRow row;
    row.segment_id = text(segments[i], where, "segmentID");
    row.client_id = text(segments[i], where, "clientID");
    row.segment_name = text(segments[i], where, "segmentName");
    row.te_endpoint = text(segments[i], where, "teEndpoint");
    row.protocol = text(segments[i], where, "protocol");
    row.status = text(segments[i], where, "status");
    row.allocator_used_bytes = optionalBytes(segments[i], where, "allocatorUsed");
    r.segments.push_back(std::move(row));
  }
  return r;
}

std::string backendStatusCase(const Json& in) {
  onlyKeys(in, "", {"backend", "facts", "reading", "generation", "now"});
  BackendFacts facts;
  facts.backend = required(in, "backend", api::backendFromJson);
  const Json f = mapping(in, "", "facts");
  onlyKeys(f, "facts", {"consumers", "droppedStale"});
  facts.consumers = texts(f, "facts", "consumers");
  facts.dropped_stale = flag(f, "facts", "droppedStale");
  const BackendReading reading = backendReading(mapping(in, "", "reading"), facts.backend);

  return pretty(api::backendStatusToJson(
      externalBackendStatus(facts, reading, generationOf(in, facts.backend.metadata), nowOf(in))));
}

// ---------------------------------------------------------------------------------------------
// managed-backend-status

// What a managed store's workloads and Lease say (managed-backend-status and backend-plan):
// leaderDeployment, leaderPods, podsUnreadable, groups, lease.
void storeFacts(const Json& f, std::string_view where, ManagedBackendFacts& facts) {
  const std::string lease_where = at(where, "lease");
  if (const Json* deployment = field(f, "leaderDeployment")) {
    facts.leader_deployment = *deployment;
  }
  for (const Json& pod : list(f, where, "leaderPods")) {
    facts.leader_pods.push_back(pod);
  }
  if (auto unreadable = optionalText(f, where, "podsUnreadable")) {
    facts.pods_listed = false;
    facts.pods_error = *unreadable;
  }
  const Json groups = list(f, where, "groups");
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::string group_where = std::string(where) + ".groups[" + std::to_string(g) + "]";
    onlyKeys(groups[g], group_where, {"daemonSet", "pods"});
    MemberGroupObservation group;
    if (const Json* daemon_set = field(groups[g], "daemonSet")) {
      group.daemon_set = *daemon_set;
    }
    const Json pods = list(groups[g], group_where, "pods");
    for (std::size_t i = 0; i < pods.size(); ++i) {
      const std::string pod_where = group_where + ".pods[" + std::to_string(i) + "]";
      onlyKeys(pods[i], pod_where, {"pod", "inSurveyWindow", "mountFailure"});
      group.pods.push_back({mapping(pods[i], pod_where, "pod"),
                            flag(pods[i], pod_where, "inSurveyWindow"),
                            optionalText(pods[i], pod_where, "mountFailure").value_or("")});
    }
    facts.groups.push_back(std::move(group));
  }
  const Json lease = mapping(f, where, "lease");
  onlyKeys(lease, lease_where, {"state", "holder", "transitions", "error"});
  facts.lease.state =
      choice<LeaseObservation::State>(lease, lease_where, "state", LeaseObservation::State::Absent,
                                      {{"Absent", LeaseObservation::State::Absent},
                                       {"Read", LeaseObservation::State::Read},
                                       {"Unreadable", LeaseObservation::State::Unreadable}});
  facts.lease.holder = text(lease, lease_where, "holder");
  facts.lease.transitions = optionalCount(lease, lease_where, "transitions").value_or(0);
  facts.lease.error = text(lease, lease_where, "error");
}

std::string managedBackendStatusCase(const Json& in) {
  onlyKeys(in, "", {"backend", "facts", "reading", "generation", "now"});
  ManagedBackendFacts facts;
  facts.backend.backend = required(in, "backend", api::backendFromJson);
  const api::KVCacheBackend& backend = facts.backend.backend;
  const Json f = mapping(in, "", "facts");
  onlyKeys(f, "facts",
           {"consumers", "droppedStale", "namespace", "imageError", "publishedLeaderImage",
            "settingsImage", "leaderDeployment", "leaderPods", "podsUnreadable", "groups", "lease",
            "teardown"});
  facts.backend.consumers = texts(f, "facts", "consumers");
  facts.backend.dropped_stale = flag(f, "facts", "droppedStale");
  facts.namespace_name = text(f, "facts", "namespace", "gpustack-system");
  facts.image_error = optionalText(f, "facts", "imageError");
  facts.published_leader_image = optionalText(f, "facts", "publishedLeaderImage");
  facts.settings_image = text(f, "facts", "settingsImage", std::string(api::kDefaultBackendImage));
  storeFacts(f, "facts", facts);
  const Json reading_in = mapping(in, "", "reading");
  BackendReading reading = backendReading(reading_in, backend);
  if (field(reading_in, "adminAddress") == nullptr) {
    reading.admin_address = api::endpointAddress(
        managedEndpoints(backend.metadata.name, facts.namespace_name), api::kEndpointAdmin);
  }
  const std::int64_t generation = generationOf(in, backend.metadata);
  if (auto where = optionalText(f, "facts", "teardown")) {
    return pretty(
        api::backendStatusToJson(teardownStatus(facts.backend, *where, generation, nowOf(in))));
  }
  const api::KVCacheBackend::Status status =
      managedBackendStatus(facts, reading, generation, nowOf(in));
  const std::optional<std::string> event = tierNotEmptyEvent(backend.status, status);
  return pretty(Json{{"status", api::backendStatusToJson(status)},
                     {"tierNotEmptyEvent", event ? Json(*event) : Json()}});
}

// ---------------------------------------------------------------------------------------------
// ledger-plan

std::vector<DomainClaim> claimsOf(const Json& in) {
  std::vector<DomainClaim> claims;
  const Json claim_list = list(in, "", "claims");
  for (std::size_t i = 0; i < claim_list.size(); ++i) {
    const std::string where = "claims[" + std::to_string(i) + "]";
    onlyKeys(claim_list[i], where, {"domain", "binding", "pool", "ceiling", "deleting"});
    DomainClaim claim;
    claim.domain = text(claim_list[i], where, "domain");
    std::tie(claim.binding_namespace, claim.binding_name) =
        namespacedName(text(claim_list[i], where, "binding"), at(where, "binding"));
    claim.pool = text(claim_list[i], where, "pool");
    claim.ceiling_bytes = bytes(claim_list[i], where, "ceiling");
    claim.deleting = flag(claim_list[i], where, "deleting");
    claims.push_back(std::move(claim));
  }
  return claims;
}

// A ledger as read: [{id, requested, explicit, effective}].
std::vector<ObservedTenant> ledgerOf(const Json& in, const std::string& key) {
  std::vector<ObservedTenant> observed;
  const Json entries = list(in, "", key);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string where = key + "[" + std::to_string(i) + "]";
    onlyKeys(entries[i], where, {"id", "requested", "explicit", "effective"});
    observed.push_back(
        {text(entries[i], where, "id"), bytes(entries[i], where, "requested"),
         flag(entries[i], where, "explicit"),
         entries[i].contains("effective") ? bytes(entries[i], where, "effective") : 0});
  }
  return observed;
}

std::string ledgerPlanCase(const Json& in) {
  onlyKeys(in, "", {"claims", "observed", "registered", "releasable"});
  const std::vector<DomainClaim> claims = claimsOf(in);
  const std::vector<ObservedTenant> observed = ledgerOf(in, "observed");
  const std::vector<std::string> registered = texts(in, "", "registered");
  const std::vector<std::string> releasable = texts(in, "", "releasable");

  const DesiredLedger desired = desiredLedger(claims);
  const LedgerPlan plan = planLedger(desired, observed, {registered.begin(), registered.end()},
                                     {releasable.begin(), releasable.end()});

  Json tenants = Json::object();
  for (const auto& [domain, requested] : desired.tenants) {
    tenants[domain] = requested;
  }
  Json contested = Json::object();
  for (const auto& [domain, claimants] : desired.contested) {
    contested[domain] = claimants;
  }
  Json puts = Json::array();
  for (const auto& [domain, requested] : plan.puts) {
    puts.push_back({{"domain", domain}, {"requested", requested}});
  }
  return pretty(
      {{"desired",
        {{"tenants", tenants},
         {"contested", contested},
         {"releasing",
          Json(std::vector<std::string>(desired.releasing.begin(), desired.releasing.end()))}}},
       {"plan", {{"puts", puts}, {"deletes", Json(plan.deletes)}, {"held", Json(plan.held)}}}});
}

// ---------------------------------------------------------------------------------------------
// ledger-ripple

std::string ledgerRippleCase(const Json& in) {
  onlyKeys(in, "", {"claims", "written", "before", "after", "afterRead"});
  const bool after_read = !in.contains("afterRead") || flag(in, "", "afterRead");
  const LedgerRipple ripple =
      ledgerRipple(claimsOf(in), texts(in, "", "written"), ledgerOf(in, "before"),
                   ledgerOf(in, "after"), after_read);
  return pretty(
      {{"recut", ripple.recut},
       {"pools", Json(std::vector<std::string>(ripple.pools.begin(), ripple.pools.end()))}});
}

// ---------------------------------------------------------------------------------------------
// admission-pool, admission-binding and admission-backend

AdmissionOperation operationOf(const Json& in) {
  return choice<AdmissionOperation>(
      in, "", "operation", AdmissionOperation::Create,
      {{"CREATE", AdmissionOperation::Create}, {"UPDATE", AdmissionOperation::Update}});
}

using golden::verdictJson;

std::string admissionPoolCase(const Json& in) {
  onlyKeys(in, "", {"operation", "pool", "old", "backend"});
  PoolAdmission request;
  request.operation = operationOf(in);
  request.pool = required(in, "pool", api::poolFromJson);
  if (const Json* old = field(in, "old"); old != nullptr && !old->is_null()) {
    request.old = decoded(*old, "old", api::poolFromJson);
  }
  if (const Json* backend = field(in, "backend"); backend != nullptr && !backend->is_null()) {
    request.backend = decoded(*backend, "backend", api::backendFromJson);
  }
  return pretty(verdictJson(admitPool(request), api::kKindPool, request.pool.metadata.name));
}

std::string_view knowledgeName(LedgerKnowledge knowledge) {
  switch (knowledge) {
    case LedgerKnowledge::HasLedger:
      return "HasLedger";
    case LedgerKnowledge::NoLedger:
      return "NoLedger";
    case LedgerKnowledge::Unknown:
      return "Unknown";
  }
  return "?";
}

std::string admissionBindingCase(const Json& in) {
  onlyKeys(in, "",
           {"operation", "binding", "old", "dtypeOwned", "pool", "backend", "siblings", "ledger",
            "backendObject"});
  BindingAdmission request;
  request.operation = operationOf(in);
  request.binding = required(in, "binding", api::bindingFromJson);
  if (const Json* old = field(in, "old"); old != nullptr && !old->is_null()) {
    request.old = decoded(*old, "old", api::bindingFromJson);
  }
  request.dtype_owned = flag(in, "", "dtypeOwned", true);
  if (const Json* pool = field(in, "pool"); pool != nullptr) {
    request.pool_looked_up = true;
    if (!pool->is_null()) {
      request.pool = decoded(*pool, "pool", api::poolFromJson);
    }
  }
  request.backend = text(in, "", "backend",
                         request.pool && request.pool->spec.backends.size() == 1
                             ? request.pool->spec.backends.front()
                             : std::string());
  const Json siblings = list(in, "", "siblings");
  for (std::size_t i = 0; i < siblings.size(); ++i) {
    const std::string where = "siblings[" + std::to_string(i) + "]";
    onlyKeys(siblings[i], where, {"binding", "domain"});
    auto [namespace_name, name] =
        namespacedName(text(siblings[i], where, "binding"), at(where, "binding"));
    request.siblings.push_back({namespace_name, name, text(siblings[i], where, "domain")});
  }
  const bool from_pool = text(in, "", "ledger") == "FromPool";
  if (from_pool) {
    if (!request.pool) {
      bad("ledger", "FromPool needs a pool");
    }
    std::optional<api::KVCacheBackend> backend;
    if (const Json* object = field(in, "backendObject"); object != nullptr && !object->is_null()) {
      backend = decoded(*object, "backendObject", api::backendFromJson);
    }
    request.ledger = ledgerKnowledge(*request.pool, backend);
  } else {
    request.ledger = choice<LedgerKnowledge>(in, "", "ledger", LedgerKnowledge::Unknown,
                                             {{"HasLedger", LedgerKnowledge::HasLedger},
                                              {"NoLedger", LedgerKnowledge::NoLedger},
                                              {"Unknown", LedgerKnowledge::Unknown}});
  }

  Json out = verdictJson(admitBinding(request), api::kKindBinding, request.binding.metadata.name);
  if (from_pool) {
    out["ledger"] = std::string(knowledgeName(request.ledger));
  }
  return pretty(out);
}

std::string admissionBackendCase(const Json& in) {
  onlyKeys(in, "", {"operation", "backend", "old", "settingsImage"});
  BackendAdmission request;
  request.operation = operationOf(in);
  const Json* backend = field(in, "backend");
  if (backend == nullptr || !backend->is_object()) {
    bad("backend", "a whole object is required");
  }
  request.object = *backend;
  if (const Json* old = field(in, "old"); old != nullptr && !old->is_null()) {
    if (!old->is_object()) {
      bad("old", "must be a whole object");
    }
    request.old = *old;
  }
  request.settings_image = text(in, "", "settingsImage", std::string(api::kDefaultBackendImage));
  return pretty(verdictJson(admitBackend(request), api::kKindBackend,
                            stringAt(*backend, {"metadata", "name"})));
}

// ---------------------------------------------------------------------------------------------
// tenant-policy

std::string fromHex(const std::string& hex, const std::string& where) {
  std::string out;
  if (hex.size() % 2 != 0) {
    bad(where, "needs an even number of hex digits");
  }
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    try {
      out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    } catch (const std::exception&) {
      bad(where, "\"" + hex + "\" is not hex");
    }
  }
  return out;
}

std::string tenantPolicyCase(const Json& in) {
  onlyKeys(in, "", {"backend", "namespace", "tenants"});
  std::vector<TenantPolicy> tenants;
  const Json entries = list(in, "", "tenants");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string where = "tenants[" + std::to_string(i) + "]";
    onlyKeys(entries[i], where, {"name", "nameHex", "quota"});
    TenantPolicy tenant;
    tenant.name = field(entries[i], "nameHex") != nullptr
                      ? fromHex(text(entries[i], where, "nameHex"), at(where, "nameHex"))
                      : text(entries[i], where, "name");
    auto quota = optionalCount(entries[i], where, "quota");
    if (!quota) {
      bad(at(where, "quota"), "is required");
    }
    tenant.quota_bytes = *quota;
    tenants.push_back(std::move(tenant));
  }
  const std::string backend = text(in, "", "backend", "mooncake-dram");
  const std::string namespace_name = text(in, "", "namespace", "gpustack-system");

  auto document = renderPolicyFile(tenants);
  auto config_map = tenantQuotaPolicyConfigMap(backend, namespace_name, tenants);
  if (!document.ok()) {
    EXPECT_FALSE(config_map.ok()) << "a ConfigMap was rendered for tenants the file refuses";
    EXPECT_EQ(config_map.status(), document.status());
    return "# error\n" + document.status().toString() + "\n";
  }
  std::vector<TenantPolicy> sorted = tenants;
  std::sort(sorted.begin(), sorted.end(),
            [](const TenantPolicy& a, const TenantPolicy& b) { return a.name < b.name; });
  auto back = parsePolicyFile(*document);
  EXPECT_TRUE(back.ok()) << back.status().message();
  if (back.ok()) {
    EXPECT_EQ(*back, sorted) << "the rendered document does not read back to its tenants";
  }
  EXPECT_TRUE(config_map.ok()) << config_map.status().message();
  if (!config_map.ok()) {
    return "# document\n" + *document;
  }
  EXPECT_EQ((*config_map)["data"][std::string(kTenantQuotaPolicyKey)], *document);
  return "# document\n" + *document + "# configMap\n" + pretty(*config_map);
}

// ---------------------------------------------------------------------------------------------
// pool-plan

std::vector<ObservedTenant> observedTenants(const Json& in, std::string_view where,
                                            std::string_view key) {
  std::vector<ObservedTenant> out;
  const Json items = list(in, where, key);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = at(where, key) + "[" + std::to_string(i) + "]";
    onlyKeys(items[i], item, {"id", "requested", "explicit", "effective"});
    out.push_back({text(items[i], item, "id"), bytes(items[i], item, "requested"),
                   flag(items[i], item, "explicit"),
                   optionalBytes(items[i], item, "effective").value_or(0)});
  }
  return out;
}

template <typename Decoder>
auto decodedList(const Json& in, std::string_view key, Decoder decode) {
  std::vector<decltype(decoded(Json(), "", decode))> out;
  const Json items = list(in, "", key);
  for (std::size_t i = 0; i < items.size(); ++i) {
    out.push_back(decoded(items[i], std::string(key) + "[" + std::to_string(i) + "]", decode));
  }
  return out;
}

std::string poolPlanCase(const Json& in) {
  onlyKeys(in, "",
           {"pool", "bindings", "backend", "siblings", "siblingBindings", "holds", "reading",
            "ledgerWritten", "operatorNamespace", "resync", "now"});
  PoolObservation seen;
  seen.now = nowOf(in);
  seen.operator_namespace = text(in, "", "operatorNamespace", "gpustack-system");
  seen.resync = std::chrono::seconds(optionalCount(in, "", "resync").value_or(30));
  seen.pool = required(in, "pool", api::poolFromJson);
  seen.bindings = decodedList(in, "bindings", api::bindingFromJson);
  if (const Json* backend = field(in, "backend"); backend != nullptr && !backend->is_null()) {
    seen.backend = decoded(*backend, "backend", api::backendFromJson);
  }
  if (poolBackend(seen.pool, seen.backend).resolved()) {
    seen.siblings.push_back(std::make_shared<const api::KVCachePool>(seen.pool));
    for (api::KVCachePool& sibling : decodedList(in, "siblings", api::poolFromJson)) {
      seen.siblings.push_back(std::make_shared<const api::KVCachePool>(std::move(sibling)));
    }
    for (const api::KVCachePoolBinding& binding : seen.bindings) {
      seen.master_bindings.push_back(std::make_shared<const api::KVCachePoolBinding>(binding));
    }
    for (api::KVCachePoolBinding& binding :
         decodedList(in, "siblingBindings", api::bindingFromJson)) {
      seen.master_bindings.push_back(
          std::make_shared<const api::KVCachePoolBinding>(std::move(binding)));
    }
  }
  const Json holds = mapping(in, "", "holds");
  for (const auto& [key, hold] : holds.items()) {
    const std::string where = "holds." + key;
    onlyKeys(hold, where, {"holders", "goneUsers", "windowLeft", "windowCloses"});
    BindingHold h;
    h.holders = texts(hold, where, "holders");
    h.gone_users = texts(hold, where, "goneUsers");
    h.window_left_seconds = optionalCount(hold, where, "windowLeft");
    h.window_closes = optionalText(hold, where, "windowCloses");
    seen.holds[key] = h;
  }
  if (field(in, "reading") != nullptr) {
    seen.reading = masterReading(mapping(in, "", "reading"));
  }
  if (const Json* written = field(in, "ledgerWritten"); written != nullptr) {
    onlyKeys(*written, "ledgerWritten", {"written", "before"});
    seen.ledger_written = LedgerWrites{texts(*written, "ledgerWritten", "written"),
                                       observedTenants(*written, "ledgerWritten", "before")};
  }

  // The pass's two stages: the ledger stage from the observation; the report stage after it.
  // Without ledgerWritten and with no ledger write planned, the report stage runs on the same
  // reading (which carries the pass's scrape) and the golden shows both stages together. With
  // ledgerWritten, the golden is the report stage alone.
  PoolPlan plan = planPool(seen);
  if (!seen.ledger_written && !plan.writesLedger()) {
    PoolObservation after = seen;
    after.ledger_written = LedgerWrites{{}, seen.reading.tenants};
    PoolPlan report = planPool(after);
    report.add_pool_finalizer = plan.add_pool_finalizer;
    report.claim_backend = plan.claim_backend;
    report.binding_finalizers = plan.binding_finalizers;
    report.ledger = plan.ledger;
    plan = std::move(report);
  }
  Json out = Json::object();
  out["guards"] = {{"addPoolFinalizer", plan.add_pool_finalizer},
                   {"claimBackend", plan.claim_backend},
                   {"bindingFinalizers", plan.binding_finalizers}};
  Json puts = Json::array();
  for (const auto& [domain, requested] : plan.ledger.puts) {
    puts.push_back({{"domain", domain}, {"requested", requested}});
  }
  out["ledger"] = {{"puts", puts}, {"deletes", plan.ledger.deletes}, {"held", plan.ledger.held}};
  out["ripple"] = plan.ripple;
  out["tenantPolicy"] = plan.tenant_policy ? *plan.tenant_policy : Json();
  if (plan.tenant_policy_error) {
    out["tenantPolicyError"] = *plan.tenant_policy_error;
  }
  Json released = Json::array();
  Json statuses = Json::object();
  for (const PoolPlan::BindingStep& step : plan.bindings) {
    if (step.release) {
      released.push_back(step.key);
    } else if (step.status) {
      statuses[step.key] = api::bindingStatusToJson(step.status->status);
    }
  }
  out["releaseBindings"] = released;
  out["bindingStatuses"] = statuses;
  out["releasePool"] = plan.release_pool;
  out["poolStatus"] = plan.pool_status ? api::poolStatusToJson(plan.pool_status->status) : Json();
  out["storeFailure"] = plan.store_failure ? Json(*plan.store_failure) : Json();
  out["requeueAfterSeconds"] =
      std::chrono::duration_cast<std::chrono::seconds>(plan.requeue_after).count();
  return pretty(out);
}

// ---------------------------------------------------------------------------------------------
// backend-plan and teardown-plan

std::string nextName(BackendNext next) {
  switch (next) {
    case BackendNext::Done:
      return "Done";
    case BackendNext::Resync:
      return "Resync";
    case BackendNext::TeardownPoll:
      return "TeardownPoll";
  }
  return "?";
}

std::set<std::string> goneOf(const Json& in) {
  const std::vector<std::string> gone = texts(in, "", "gone");
  return {gone.begin(), gone.end()};
}

StoreInputs storeInputsOf(const Json& in) {
  return {text(in, "", "namespace", "gpustack-system"),
          text(in, "", "settingsImage", std::string(api::kDefaultBackendImage))};
}

// "Code: message", or null.
Json failureJson(const std::optional<Status>& failure) {
  return failure ? Json(failure->toString()) : Json();
}

std::string externalPlan(const Json& in, const api::KVCacheBackend& backend) {
  onlyKeys(in, "", {"backend", "gone", "reading", "writtenConsumers", "now"});
  ExternalBackendObservation seen;
  seen.now = nowOf(in);
  seen.backend = backend;
  seen.gone = goneOf(in);
  seen.reading = backendReading(mapping(in, "", "reading"), backend);
  if (field(in, "writtenConsumers") != nullptr) {
    seen.written_consumers = texts(in, "", "writtenConsumers");
  }
  const ExternalBackendPlan plan = planExternalBackend(seen);
  Json out = Json::object();
  out["addFinalizer"] = plan.add_finalizer;
  out["status"] = plan.status ? api::backendStatusToJson(plan.status->status) : Json();
  out["release"] = plan.release;
  out["next"] =
      plan.status ? Json("planned again after the status write") : Json(nextName(plan.next));
  return pretty(out);
}

std::string managedPlan(const Json& in, const api::KVCacheBackend& backend) {
  onlyKeys(in, "",
           {"backend", "gone", "reading", "namespace", "settingsImage", "facts", "roleBindings",
            "roleBindingsError", "handover", "converged", "now"});
  ManagedBackendObservation seen;
  seen.now = nowOf(in);
  seen.backend = backend;
  seen.gone = goneOf(in);
  seen.inputs = storeInputsOf(in);
  seen.store.namespace_name = seen.inputs.namespace_name;
  const Json f = mapping(in, "", "facts");
  onlyKeys(f, "facts", {"leaderDeployment", "leaderPods", "podsUnreadable", "groups", "lease"});
  storeFacts(f, "facts", seen.store);
  const Json bindings = mapping(in, "", "roleBindings");
  for (const auto& [name, binding] : bindings.items()) {
    const std::string where = "roleBindings." + name;
    onlyKeys(binding, where, {"uid", "roleRef", "ours"});
    seen.role_bindings[name] = {text(binding, where, "uid"), mapping(binding, where, "roleRef"),
                                flag(binding, where, "ours")};
  }
  if (auto error = optionalText(in, "", "roleBindingsError")) {
    seen.role_bindings_error = Status(StatusCode::Unavailable, *error);
  }
  if (auto holder = optionalText(in, "", "handover")) {
    seen.handover = HandoverBaseline{*holder};
  }
  // The observer reads the master exactly when something could answer.
  const bool readable = managedMasterReadable(backend, seen.inputs, seen.store.leader_deployment);
  if ((field(in, "reading") != nullptr) != readable) {
    bad("reading", readable ? "is required: an image resolves or the leader Deployment exists, "
                              "so the master is read"
                            : "must be absent: nothing runs that could answer, so the master "
                              "is not read");
  }
  const Json reading_in = mapping(in, "", "reading");
  if (readable) {
    seen.reading = backendReading(reading_in, backend);
    if (field(reading_in, "adminAddress") == nullptr) {
      seen.reading.admin_address = api::endpointAddress(
          managedEndpoints(backend.metadata.name, seen.inputs.namespace_name), api::kEndpointAdmin);
    }
  }
  if (const Json* converged = field(in, "converged"); converged != nullptr) {
    onlyKeys(*converged, "converged", {"error"});
    seen.converged = StoreConverge{okStatus()};
    if (auto error = optionalText(*converged, "converged", "error")) {
      seen.converged->outcome = Status(StatusCode::FailedPrecondition, *error);
    }
  }

  const ManagedBackendPlan plan = planManagedBackend(seen);
  Json out = Json::object();
  out["addFinalizer"] = plan.add_finalizer;
  Json replaced = Json::array();
  for (const RoleBindingReplacement& r : plan.replace_role_bindings) {
    replaced.push_back({{"name", r.name}, {"uid", r.uid}});
  }
  out["replaceRoleBindings"] = replaced;
  Json applied = Json();
  if (plan.apply) {
    applied = Json::array();
    for (const RenderedObject& r : *plan.apply) {
      applied.push_back(r.object["kind"].get<std::string>() + " " +
                        r.object["metadata"]["name"].get<std::string>() + " (role " + r.role +
                        (r.group ? ", group " + std::to_string(*r.group) : std::string()) + ")");
    }
  }
  out["apply"] = applied;
  if (plan.tenant_policy_seed) {
    out["tenantPolicySeed"] = plan.tenant_policy_seed->object;
  }
  Json stale = Json::array();
  for (const StaleMember& member : plan.stale_members) {
    stale.push_back({{"name", member.name}, {"uid", member.uid}, {"hash", member.hash}});
  }
  out["staleMembers"] = stale;
  out["renderFailed"] = plan.render_failed ? Json(*plan.render_failed) : Json();
  out["handover"] = {
      {"baseline", plan.handover_baseline ? Json(plan.handover_baseline->holder) : Json()},
      {"forget", plan.forget_handover},
      {"event", plan.handover ? Json(*plan.handover) : Json()}};
  out["status"] = plan.status ? api::backendStatusToJson(plan.status->status) : Json();
  out["tierNotEmptyEvent"] =
      plan.status && plan.status->tier_not_empty ? Json(*plan.status->tier_not_empty) : Json();
  out["failure"] = failureJson(plan.failure);
  out["next"] =
      plan.converges() ? Json("planned again after the converge") : Json(nextName(plan.next));
  return pretty(out);
}

std::string backendPlanCase(const Json& in) {
  const api::KVCacheBackend backend = required(in, "backend", api::backendFromJson);
  return backend.spec.managed ? managedPlan(in, backend) : externalPlan(in, backend);
}

// The resource a child of the store is deleted through, by its kind.
std::string resourceOfKind(const std::string& kind, const std::string& where) {
  static const std::map<std::string, std::string> kResources = {
      {"Deployment", "deployments"},
      {"DaemonSet", "daemonsets"},
      {"Service", "services"},
      {"RoleBinding", "rolebindings"},
      {"Role", "roles"},
      {"ServiceAccount", "serviceaccounts"},
      {"ConfigMap", "configmaps"},
      {"NetworkPolicy", "networkpolicies"}};
  auto it = kResources.find(kind);
  if (it == kResources.end()) {
    bad(where, "kind \"" + kind + "\" is not a kind of the store");
  }
  return it->second;
}

std::string teardownPlanCase(const Json& in) {
  onlyKeys(in, "",
           {"backend", "gone", "namespace", "settingsImage", "children", "storePods", "tiers",
            "otherBackends", "now"});
  TeardownObservation seen;
  seen.now = nowOf(in);
  seen.backend = required(in, "backend", api::backendFromJson);
  seen.gone = goneOf(in);
  seen.inputs = storeInputsOf(in);
  const Json children = list(in, "", "children");
  for (std::size_t i = 0; i < children.size(); ++i) {
    const std::string where = "children[" + std::to_string(i) + "]";
    onlyKeys(children[i], where, {"object", "deletingFor"});
    const Json object = mapping(children[i], where, "object");
    seen.children.push_back({resourceOfKind(text(object, at(where, "object"), "kind"), where),
                             object, optionalCount(children[i], where, "deletingFor")});
  }
  for (const Json& pod : list(in, "", "storePods")) {
    seen.store_pods.push_back(pod);
  }
  const Json tiers = list(in, "", "tiers");
  if (!tiers.empty() && !storeWorkloadsGone(seen)) {
    bad("tiers", "are read only once no child and no store Pod is left");
  }
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    const std::string where = "tiers[" + std::to_string(i) + "]";
    onlyKeys(tiers[i], where, {"group", "nodes", "cleaners"});
    TierGroupObservation tier;
    tier.group = static_cast<int>(optionalCount(tiers[i], where, "group").value_or(0));
    for (const Json& node : list(tiers[i], where, "nodes")) {
      tier.nodes.push_back(node);
    }
    for (const Json& pod : list(tiers[i], where, "cleaners")) {
      tier.cleaners.push_back(pod);
    }
    seen.tiers.push_back(std::move(tier));
  }
  seen.other_backends = decodedList(in, "otherBackends", api::backendFromJson);

  const TeardownPlan plan = planTeardown(seen);
  Json out = Json::object();
  Json deletes = Json::array();
  for (const StoreChild& child : plan.delete_in_foreground) {
    deletes.push_back(child.resource + " " + stringAt(child.object, {"metadata", "namespace"}) +
                      "/" + stringAt(child.object, {"metadata", "name"}));
  }
  out["deleteInForeground"] = deletes;
  out["workloadNotTerminated"] = plan.workload_not_terminated;
  out["deleteLease"] = plan.delete_lease;
  Json cleaners = Json::array();
  for (const CleanupPodPlan& cleaner : plan.create_cleaners) {
    cleaners.push_back({{"group", cleaner.group}, {"pod", cleaner.pod}});
  }
  out["createCleaners"] = cleaners;
  Json node_events = Json::array();
  for (const NodeEvent& event : plan.node_events) {
    node_events.push_back({{"node", stringAt(event.node, {"metadata", "name"})},
                           {"reason", event.reason},
                           {"message", event.message}});
  }
  out["nodeEvents"] = node_events;
  out["release"] = plan.release;
  out["removeFinalizer"] = plan.remove_finalizer;
  out["where"] = plan.where ? Json(*plan.where) : Json();
  out["status"] = plan.status ? api::backendStatusToJson(plan.status->status) : Json();
  out["next"] = nextName(plan.next);
  return pretty(out);
}

// ---------------------------------------------------------------------------------------------
// The corpus.

const std::map<std::string, std::function<std::string(const Json&)>>& areas() {
  static const std::map<std::string, std::function<std::string(const Json&)>> kAreas = {
      {"binding-status", bindingStatusCase},
      {"pool-status", poolStatusCase},
      {"backend-status", backendStatusCase},
      {"ledger-plan", ledgerPlanCase},
      {"admission-pool", admissionPoolCase},
      {"admission-binding", admissionBindingCase},
      {"admission-backend", admissionBackendCase},
      {"managed-backend-status", managedBackendStatusCase},
      {"ledger-ripple", ledgerRippleCase},
      {"tenant-policy", tenantPolicyCase},
      {"pool-plan", poolPlanCase},
      {"backend-plan", backendPlanCase},
      {"teardown-plan", teardownPlanCase},
  };
  return kAreas;
}

// "area/stem" for every input of every area.
std::vector<std::string> cases() {
  std::vector<std::string> out;
  for (const auto& [area, run] : areas()) {
    if (!fs::is_directory(kDir / area)) {
      continue;
    }
    for (const std::string& stem : golden::discover(kDir / area, ".yaml")) {
      out.push_back(area + "/" + stem);
    }
  }
  return out;
}

Json readInput(const fs::path& path) {
  auto documents = parseYamlDocuments(golden::readFile(path));
  if (!documents.ok()) {
    bad(path.string(), documents.status().message());
  }
  if (documents->size() != 1 || !documents->front().value.is_object()) {
    bad(path.string(), "must hold one YAML mapping");
  }
  return documents->front().value;
}

class QuotaGolden : public testing::TestWithParam<std::string> {};

TEST_P(QuotaGolden, MatchesExpected) {
  const std::string& name = GetParam();
  const std::string area = name.substr(0, name.find('/'));
  const std::string stem = name.substr(name.find('/') + 1);
  const fs::path input = kDir / area / (stem + ".yaml");
  std::string actual;
  try {
    actual = areas().at(area)(readInput(input));
  } catch (const BadInput& error) {
    FAIL() << input.string() << ": " << error.what();
  }
  EXPECT_EQ(golden::compare(kDir / area / (stem + ".golden"), actual), "");
}

INSTANTIATE_TEST_SUITE_P(Cases, QuotaGolden, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<std::string>& param) {
                           std::string name;
                           for (char c : param.param) {
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

// Stale goldens fail: every expected file must belong to an input.
TEST(QuotaGoldenCorpus, HasNoStaleExpectedFiles) {
  for (const auto& [area, run] : areas()) {
    ASSERT_TRUE(fs::is_directory(kDir / area)) << "quota/" << area << " is missing";
    const std::vector<std::string> inputs = golden::discover(kDir / area, ".yaml");
    for (const std::string& stem : golden::discover(kDir / area, ".golden")) {
      EXPECT_TRUE(std::binary_search(inputs.begin(), inputs.end(), stem))
          << "quota/" << area << "/" << stem << ".golden has no " << stem << ".yaml";
    }
  }
}

// Every directory under quota/ is an area this file knows.
TEST(QuotaGoldenCorpus, HasOnlyKnownAreas) {
  for (const auto& entry : fs::directory_iterator(kDir)) {
    EXPECT_TRUE(areas().count(entry.path().filename().string()) > 0)
        << entry.path() << " is not an area of quota_golden_test.cc";
  }
}

TEST(QuotaGoldenCorpus, EveryAreaHasCases) {
  for (const auto& [area, run] : areas()) {
    EXPECT_GE(golden::discover(kDir / area, ".yaml").size(), 8u) << "quota/" << area;
  }
}

}  // namespace
}  // namespace kvc::policy
