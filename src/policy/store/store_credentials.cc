#include "kvc/policy/store/store_credentials.h"

#include "kvc/policy/store/admin_access.h"

namespace kvc::policy {
namespace {

// Absent, unreadable, or renewed once less than a third of its lifetime is left.
bool due(const CertificateFacts& facts, SystemTime now) {
  const auto lifetime = facts.not_after - facts.not_before;
  return now < facts.not_before || facts.not_after - now < lifetime / 3;
}

// Why a leaf must be issued anew, or "" when it is good.
std::string leafProblem(const std::optional<CertificateFacts>& leaf, SystemTime now) {
  if (!leaf) {
    return "absent or unreadable";
  }
  if (!leaf->signed_by_ca) {
    return "not signed by the store CA";
  }
  if (!leaf->key_matches) {
    return "its key does not belong to it";
  }
  if (due(*leaf, now)) {
    return "expires within a third of its lifetime";
  }
  return "";
}

std::string clientProblem(const std::optional<CertificateFacts>& leaf, std::string_view name,
                          std::string_view group, SystemTime now) {
  std::string problem = leafProblem(leaf, now);
  if (problem.empty() && (leaf->common_name != name || leaf->organization != group)) {
    problem = "names " + leaf->common_name + " of " + leaf->organization + ", not " +
              std::string(name) + " of " + std::string(group);
  }
  return problem;
}

}  // namespace

std::vector<std::string> storeAdminDnsNames(const std::string& namespace_name) {
  return {"*." + namespace_name + ".svc", "*." + namespace_name + ".svc.cluster.local"};
}

StoreCredentialPlan planStoreCredentials(const StoreCredentialState& state,
                                         const std::string& namespace_name,
                                         const std::string& metrics_identity, SystemTime now) {
  StoreCredentialPlan plan;
  if (!state.ca || !state.ca->key_matches || due(*state.ca, now)) {
    plan.ca = plan.serving = plan.operator_client = plan.metrics_client = true;
    plan.reasons.push_back(std::string(kStoreCaSecret) + ": " +
                           (!state.ca                ? "absent or unreadable"
                            : !state.ca->key_matches ? "its key does not belong to it"
                                                     : "expires within a third of its lifetime") +
                           "; every certificate is issued anew");
    return plan;
  }
  auto note = [&plan](bool& flag, std::string_view secret, const std::string& problem) {
    if (!problem.empty()) {
      flag = true;
      plan.reasons.push_back(std::string(secret) + ": " + problem);
    }
  };
  std::string serving = leafProblem(state.serving, now);
  if (serving.empty() && state.serving->dns_names != storeAdminDnsNames(namespace_name)) {
    serving = "names other hosts than the Services of " + namespace_name;
  }
  note(plan.serving, kStoreAdminTlsSecret, serving);
  note(plan.operator_client, kStoreOperatorClientSecret,
       clientProblem(state.operator_client, kStoreOperatorIdentity, kAdminOperatorGroup, now));
  note(plan.metrics_client, kStoreMetricsClientSecret,
       clientProblem(state.metrics_client, metrics_identity, kAdminMetricsGroup, now));
  return plan;
}

}  // namespace kvc::policy
