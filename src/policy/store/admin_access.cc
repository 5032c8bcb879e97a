#include "kvc/policy/store/admin_access.h"

namespace kvc::policy {

AdminAccess adminAccess(std::string_view group, std::string_view method, std::string_view path) {
  if (group == kAdminOperatorGroup) {
    return {true, ""};
  }
  if (group == kAdminMetricsGroup) {
    if (method == "GET" && (path == "/metrics" || path == "/metrics/summary")) {
      return {true, ""};
    }
    return {false, "group " + std::string(kAdminMetricsGroup) + " may only GET /metrics and " +
                       "/metrics/summary, not " + std::string(method) + " " + std::string(path)};
  }
  return {false, group.empty() ? std::string("the client certificate names no group")
                               : "group " + std::string(group) + " has no access"};
}

}  // namespace kvc::policy
