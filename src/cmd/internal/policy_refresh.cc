#include "internal/policy_refresh.h"

#include "kvc/policy/quota/tenant_quota_policy.h"
#include "kvc/store/policy_file.h"

namespace kvc::cmd::internal {

std::optional<std::string> masterPolicyFile(const std::vector<std::string>& command) {
  for (const std::string& arg : command) {
    for (const std::string_view prefix :
         {"-tenant_quota_connector_uri=", "--tenant_quota_connector_uri="}) {
      if (arg.starts_with(prefix) && arg.size() > prefix.size()) {
        return arg.substr(prefix.size());
      }
    }
  }
  return std::nullopt;
}

Status refreshPolicyFile(const kube::Api& config_maps, const std::string& name,
                         const std::string& path) {
  auto config_map = config_maps.getOptional(name);
  if (!config_map.ok()) {
    return Status(StatusCode::Unavailable,
                  "reading ConfigMap " + name + ": " + config_map.error().describe());
  }
  std::string document = "version: 1\ntenants: []\n";
  if (config_map->has_value()) {
    const Json data = (*config_map)->value("data", Json::object());
    auto it = data.find(std::string(policy::kTenantQuotaPolicyKey));
    if (it == data.end() || !it->is_string()) {
      return Status(StatusCode::InvalidArgument, "ConfigMap " + name + " has no string key " +
                                                     std::string(policy::kTenantQuotaPolicyKey));
    }
    document = it->get<std::string>();
  }
  // The master refuses to start on a document it cannot read: keep the seeded copy then.
  if (auto parsed = policy::parsePolicyFile(document); !parsed.ok()) {
    return Status(StatusCode::InvalidArgument,
                  "ConfigMap " + name + ": " + parsed.status().message());
  }
  return store::writePolicyFileAtomic(path, document);
}

}  // namespace kvc::cmd::internal
