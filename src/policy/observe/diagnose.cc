#include "kvc/policy/observe/diagnose.h"

#include <algorithm>

namespace kvc::policy {
namespace {

// One row of the Troubleshooting table: the signal (a condition of a kind with a status, and one
// of `reasons`, any reason when empty) and what the table says of it.
struct Row {
  std::string_view kind;
  std::string_view condition;
  std::string_view status;
  std::vector<std::string_view> reasons;
  FindingSeverity severity;
  std::string_view symptom;
  std::string_view fix;
};

// function-length: table
const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      {"KVCacheBackend",
       "LeaderAvailable",
       "False",
       {},
       FindingSeverity::Problem,
       "KVCacheBackend stuck in Provisioning or Error",
       "The leader Deployment is unready, its image lacks the election backend, or an external "
       "endpoint's address is unreachable: the message names the leader Pod and what it waits "
       "on"},
      {"KVCacheBackend",
       "ElectionObserved",
       "False",
       {"NoHolder"},
       FindingSeverity::Problem,
       "A ready leader and a holderless Lease",
       "The image cannot elect (a published upstream image: remove spec.image, or name a tag of "
       "the Setting kv-cache-backend-image's repository), the role binding is missing, or a "
       "first campaign still runs"},
      {"KVCacheBackend",
       "MembersMounted",
       "False",
       {"SegmentsShort", "NoSegments"},
       FindingSeverity::Problem,
       "KVCacheBackend shows Degraded",
       "Member Pods failing to mount or allocate memory/disk segments: check node capacity and "
       "the member logs; NoSegments with no member Pod means the group selects no node"},
      {"KVCacheBackend",
       "MembersMounted",
       "False",
       {"FailedMount"},
       FindingSeverity::Problem,
       "Member Pod stuck",
       "The tier directory does not exist on that node: create it as the message says (Step 5), "
       "install -d -o 65532 -g 0 -m 0750 DIR"},
      {"KVCacheBackend",
       "MembersMounted",
       "False",
       {"MemberCrashLooping"},
       FindingSeverity::Problem,
       "Member Pod runs but never becomes Ready",
       "The directory exists but the image's user cannot write it (the log says `no write "
       "permission on directory`): install -d -o 65532 -g 0 -m 0750 DIR for the default image"},
      {"KVCacheBackend",
       "MembersMounted",
       "False",
       {"MemberInitCrashLooping"},
       FindingSeverity::Problem,
       "Member init container restarts",
       "The directory-survey init container restarted (the message gives the restart count, exit "
       "code and termination message); it runs sh -c, so the member image needs a shell"},
      {"KVCacheBackend",
       "TierWasEmpty",
       "False",
       {"PreexistingContent"},
       FindingSeverity::Problem,
       "Local disk tier reports preexisting content",
       "The directory held files from an earlier backend. Nothing was removed; empty it yourself. "
       "cleanAfterDelete: true empties it only when this backend is deleted"},
      {"KVCachePool",
       "BackendResolved",
       "False",
       {},
       FindingSeverity::Problem,
       "KVCachePool shows Error",
       "The referenced backend does not exist"},
      {"KVCachePool",
       "CapacityAllocatable",
       "False",
       {},
       FindingSeverity::Problem,
       "KVCachePool shows Error",
       "The backend has zero allocatable capacity: NothingToAllocate means no member has "
       "mounted yet, and a restarted master can take roughly 30 s to remount its segments"},
      {"KVCachePool",
       "QuotaLedgerAvailable",
       "False",
       {"MultiTenancyDisabled"},
       FindingSeverity::Note,
       "KVCachePool QuotaLedgerAvailable=False",
       "The backend explicitly set multiTenancy: false; ceiling quotas are intentionally not "
       "enforced"},
      {"KVCachePool",
       "QuotaWithinTotal",
       "False",
       {"Oversubscribed"},
       FindingSeverity::Note,
       "Pool reports oversubscribed",
       "Not a fault: the Bindings' ceilings sum past quota.total and grants are recut in "
       "proportion (each status.effectiveQuota). Lower a ceiling or raise quota.total for full "
       "grants"},
      {"KVCachePoolBinding",
       "QuotaGranted",
       "False",
       {"ZeroGranted"},
       FindingSeverity::Problem,
       "KVCachePoolBinding effectiveQuota: 0",
       "The master grants this domain nothing. Read the pool's CapacityAllocatable: "
       "NothingToAllocate means no member has mounted yet, and a restarted master can take "
       "roughly 30 s to remount its segments. Otherwise a proportional recut left this domain no "
       "share"},
      {"KVCachePoolBinding",
       "DomainExclusive",
       "False",
       {"DomainClaimedByMultipleBindings"},
       FindingSeverity::Problem,
       "Two Bindings report one domain",
       "Two creates raced past admission; delete one of them"},
      // Not a row of the walkthrough's table: the silent zero (docs/observability.md).
      {"KVCachePoolBinding",
       "CacheUsed",
       "False",
       {"NothingCached"},
       FindingSeverity::Problem,
       "Binding caches nothing",
       "Its engine Pods have been Ready for kv-cache-unused-after while the domain holds nothing "
       "and no Pod reports a lookup. Run kvcache probe on the Binding; check each Pod's "
       "KVCacheUnused Event: an image with no reader for the injected configuration, a launch "
       "that drops the connector flag, a store client the master refuses, or no traffic"},
      {"KVCachePoolBinding",
       "Releasable",
       "False",
       {"HeldByWorkloads"},
       FindingSeverity::Problem,
       "Deletion of KVCachePoolBinding blocked",
       "Active ModelDeployments or Pods reference this Binding; delete the client workloads "
       "first"},
  };
  return table;
}

bool matches(const Row& row, const ConditionView& c) {
  return c.type == row.condition && c.status == row.status &&
         (row.reasons.empty() ||
          std::find(row.reasons.begin(), row.reasons.end(), c.reason) != row.reasons.end());
}

void walk(const std::vector<Json>& objects, std::string_view kind, std::vector<Finding>& out) {
  for (const Json& object : objects) {
    for (const ConditionView& c : conditionsOf(object)) {
      for (const Row& row : rows()) {
        if (row.kind == kind && matches(row, c) && mattersNow(object, c)) {
          out.push_back({row.severity, std::string(kind), objectName(object),
                         std::string(row.symptom), c, std::string(row.fix)});
        }
      }
    }
  }
}

std::string_view severityName(FindingSeverity s) {
  return s == FindingSeverity::Problem ? "problem" : "note";
}

}  // namespace

std::vector<Finding> diagnose(const ClusterState& state) {
  std::vector<Finding> out;
  walk(state.backends, "KVCacheBackend", out);
  walk(state.pools, "KVCachePool", out);
  walk(state.bindings, "KVCachePoolBinding", out);
  // Problems first, then notes; within each, the table's order by kind, then by object.
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return a.severity == FindingSeverity::Problem && b.severity == FindingSeverity::Note;
  });
  return out;
}

bool anyProblem(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.severity == FindingSeverity::Problem; });
}

Json findingsJson(const std::vector<Finding>& findings) {
  Json list = Json::array();
  int problems = 0;
  for (const Finding& f : findings) {
    problems += f.severity == FindingSeverity::Problem ? 1 : 0;
    list.push_back({{"severity", severityName(f.severity)},
                    {"kind", f.kind},
                    {"object", f.object},
                    {"symptom", f.symptom},
                    {"signal",
                     {{"condition", f.signal.type},
                      {"status", f.signal.status},
                      {"reason", f.signal.reason},
                      {"message", f.signal.message}}},
                    {"fix", f.fix}});
  }
  return Json{{"problems", problems},
              {"notes", static_cast<int>(findings.size()) - problems},
              {"findings", list}};
}

std::string findingsText(const std::vector<Finding>& findings) {
  if (findings.empty()) {
    return "No symptom of the Troubleshooting table found.\n";
  }
  std::string out;
  int problems = 0;
  for (const Finding& f : findings) {
    problems += f.severity == FindingSeverity::Problem ? 1 : 0;
    out += "[" + std::string(severityName(f.severity)) + "] " + f.kind + " " + f.object + ": " +
           f.symptom + "\n";
    out += "  signal: " + f.signal.type + "=" + f.signal.status + "/" + f.signal.reason +
           (f.signal.message.empty() ? "" : ": " + f.signal.message) + "\n";
    out += "  fix:    " + f.fix + "\n";
  }
  out += std::to_string(problems) + " problem(s), " +
         std::to_string(static_cast<int>(findings.size()) - problems) + " note(s)\n";
  return out;
}

}  // namespace kvc::policy
