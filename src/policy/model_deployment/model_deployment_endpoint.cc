#include "kvc/policy/model_deployment/model_deployment_endpoint.h"

#include <algorithm>

#include "kvc/policy/model_deployment/model_deployment_render.h"

namespace kvc::policy {

std::optional<Json> renderEndpointService(const api::ModelDeployment& deployment) {
  const auto& roles = deployment.spec.roles;
  if (roles.empty() || !std::all_of(roles.begin(), roles.end(), [](const auto& role) {
        return role.kind == api::kRoleKindServer;
      })) {
    return std::nullopt;
  }
  const std::string& name = deployment.metadata.name;
  Json labels = roleObjectLabels(name, "");
  labels.erase("app.kubernetes.io/component");
  Json selector = roleSelectorLabels(name, "");
  selector.erase("app.kubernetes.io/component");
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", name}, {"namespace", deployment.metadata.namespace_name}, {"labels", labels}}},
      {"spec",
       {{"type", "ClusterIP"},
        {"selector", selector},
        {"ports", Json::array({{{"name", "http"},
                                {"port", kEndpointPort},
                                {"targetPort", "http"},
                                {"protocol", "TCP"}}})}}}};
}

std::string endpointAddress(const api::ModelDeployment& deployment) {
  return deployment.metadata.name + "." + deployment.metadata.namespace_name +
         ".svc:" + std::to_string(kEndpointPort);
}

}  // namespace kvc::policy
