#pragma once
// The Service that fronts a ModelDeployment and the endpoint it publishes (status.endpoint, the
// ENDPOINT column of `kubectl get md`).
//
// `<md>` in the deployment's namespace: ClusterIP, port 8000 to the engine container's port named
// `http` (the role renderer names the engine's port so, whatever number `ports` gives it),
// selecting every Pod of the deployment (app.kubernetes.io/name: model-deployment, instance:
// <md>); labelled like the roles (name, instance, part-of). Rendered only when every role is a
// Server: the entry of a prefill/decode split is its router, which is not offered yet, so such a
// deployment publishes no endpoint rather than one that would send requests to a decode half.

#include <optional>
#include <string>

#include "kvc/api/model_deployment.h"
#include "kvc/common/json.h"

namespace kvc::policy {

inline constexpr std::int64_t kEndpointPort = 8000;

// The Service, or nullopt when the deployment has a role that is not a Server.
std::optional<Json> renderEndpointService(const api::ModelDeployment& deployment);

// "<md>.<namespace>.svc:8000": what status.endpoint says once the Service exists.
std::string endpointAddress(const api::ModelDeployment& deployment);

}  // namespace kvc::policy
