#pragma once
// Label values the rendered workloads of several concerns share: a managed store's
// NetworkPolicies admit ModelDeployment role Pods by the labels policy/model_deployment renders,
// and every rendered object is part of the same application.

#include <string_view>

namespace kvc::policy {

// app.kubernetes.io/part-of of every object the operator renders.
inline constexpr std::string_view kPartOfWorker = "gpustack-operator-worker";
// app.kubernetes.io/name of every ModelDeployment role (its Deployments and Pods).
inline constexpr std::string_view kModelDeploymentAppName = "model-deployment";

}  // namespace kvc::policy
