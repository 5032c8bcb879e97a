#include "internal/engine_pods.h"

#include <algorithm>

#include "kvc/api/model_deployment.h"
#include "kvc/controllers/indexes.h"
#include "kvc/controllers/model_deployment_controller.h"
#include "kvc/kube/object.h"
#include "kvc/policy/inject/keys.h"
#include "kvc/policy/model_deployment/model_deployment_replicas.h"
#include "kvc/policy/usage/engine_target.h"

namespace kvc::controllers::internal {
namespace {

// The engine the webhook recorded in kvcache.gpustack.ai/injected, "" without a record.
std::string injectedEngine(const Json& pod) {
  const std::string record =
      stringAt(pod, {"metadata", "annotations", policy::kAnnotationInjected.data()});
  if (record.empty()) {
    return {};
  }
  const Json decoded = Json::parse(record, nullptr, /*allow_exceptions=*/false);
  return decoded.is_object() ? policy::engineFamily(stringAt(decoded, {"engine"})) : std::string();
}

// The engine of a ModelDeployment with a cache attached, "" otherwise.
std::string deploymentEngine(const Json& deployment) {
  if (!deployment.contains("spec") || !deployment["spec"].contains("kvCache")) {
    return {};
  }
  return policy::engineFamily(stringAt(deployment, {"spec", "engine", "name"}));
}

}  // namespace

std::string engineOf(const EnginePodSources& sources, const Json& pod) {
  if (std::string engine = injectedEngine(pod); !engine.empty()) {
    return engine;
  }
  const std::string owner = policy::replicaOwnerKey(pod);
  if (owner.empty() || sources.model_deployments == nullptr) {
    return {};
  }
  runtime::ObjectPtr deployment = sources.model_deployments->get(owner);
  return deployment ? deploymentEngine(*deployment) : std::string();
}

std::vector<EnginePod> enginePodsOf(const EnginePodSources& sources,
                                    const std::string& binding_key) {
  std::vector<EnginePod> out;
  if (sources.held_pods != nullptr) {
    for (runtime::ObjectPtr& pod : sources.held_pods->byIndex(kPodsByBinding, binding_key)) {
      std::string engine = injectedEngine(*pod);
      if (!engine.empty() && podActive(*pod)) {
        out.push_back({std::move(pod), std::move(engine)});
      }
    }
  }
  if (sources.model_deployments != nullptr && sources.replica_pods != nullptr) {
    for (const runtime::ObjectPtr& deployment :
         sources.model_deployments->byIndex(kModelDeploymentsByBinding, binding_key)) {
      const std::string engine = deploymentEngine(*deployment);
      if (engine.empty()) {
        continue;
      }
      const std::string key =
          kube::object::namespaceName(*deployment) + "/" + kube::object::name(*deployment);
      for (runtime::ObjectPtr& pod : sources.replica_pods->byIndex(kReplicasByDeployment, key)) {
        if (podActive(*pod)) {
          out.push_back({std::move(pod), engine});
        }
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const EnginePod& a, const EnginePod& b) {
    return kube::object::name(*a.pod) < kube::object::name(*b.pod);
  });
  return out;
}

}  // namespace kvc::controllers::internal
