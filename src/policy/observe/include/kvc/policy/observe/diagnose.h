#pragma once
// `kvcache diagnose`: the walkthrough's Troubleshooting table (docs/troubleshooting.md) walked over
// one snapshot of the cluster. Each row is a signal on an object — a condition with a status and
// reason — and the row's check and mitigation; every object showing a row's signal is a finding.
// A problem is something to fix; a note is a row the table lists that is not a fault (an
// oversubscribed pool, a declared single-tenant store). Rows only a moment shows (a Binding
// refused at apply) cannot be found afterwards and are not walked.

#include <string>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/policy/observe/cluster_state.h"

namespace kvc::policy {

enum class FindingSeverity { Problem, Note };

struct Finding {
  FindingSeverity severity = FindingSeverity::Problem;
  std::string kind;
  std::string object;   // objectName()
  std::string symptom;  // the table's Symptom
  ConditionView signal;
  std::string fix;  // the table's Check & Mitigation
};

std::vector<Finding> diagnose(const ClusterState& state);

// True when a finding is a problem: the command then exits 3.
bool anyProblem(const std::vector<Finding>& findings);

Json findingsJson(const std::vector<Finding>& findings);
std::string findingsText(const std::vector<Finding>& findings);

}  // namespace kvc::policy
