#include "kvc/controllers/indexes.h"

#include "kvc/kube/client.h"
#include "kvc/kube/object.h"
#include "kvc/policy/inject/keys.h"

namespace kvc::controllers {
std::vector<std::string> podBinding(const Json& pod) {
  const std::string binding =
      stringAt(pod, {"metadata", "annotations", policy::kAnnotationBinding.data()});
  if (binding.empty()) {
    return {};
  }
  return {kube::object::namespaceName(pod) + "/" + binding};
}

runtime::Transform heldPodProjection() {
  std::vector<std::string> fields = {"/metadata/annotations/kvcache.gpustack.ai~1binding",
                                     "/metadata/annotations/kvcache.gpustack.ai~1injected",
                                     "/metadata/annotations/kvcache.gpustack.ai~1container",
                                     "/status/phase",
                                     "/status/podIP",
                                     "/status/conditions"};
  fields.insert(fields.end(), kEngineContainerFields.begin(), kEngineContainerFields.end());
  return runtime::keepFields(std::move(fields));
}

std::string heldPodSelector() { return std::string(policy::kLabelInject) + "=true"; }

std::vector<std::string> eventObject(const Json& event) {
  const std::string name = stringAt(event, {"regarding", "name"});
  if (name.empty()) {
    return {};
  }
  return {name};
}

bool podActive(const Json& pod) {
  const std::string phase = stringAt(pod, {"status", "phase"});
  return phase != "Succeeded" && phase != "Failed";
}

}  // namespace kvc::controllers
