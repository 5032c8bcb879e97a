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

runtime::Transform withEngineContainers(runtime::Transform base) {
  base.id += "+engine-containers";
  base.apply = [keep = std::move(base.apply)](Json& pod) {
    keep(pod);
    if (!pod.contains("spec") || !pod["spec"].contains("containers") ||
        !pod["spec"]["containers"].is_array()) {
      return;
    }
    for (Json& container : pod["spec"]["containers"]) {
      Json kept = Json::object();
      for (const char* key : {"name", "command", "args", "ports"}) {
        if (container.is_object() && container.contains(key)) {
          kept[key] = std::move(container[key]);
        }
      }
      container = std::move(kept);
    }
  };
  return base;
}

runtime::Transform heldPodProjection() {
  return withEngineContainers(runtime::keepFields(
      {"/metadata/annotations/kvcache.gpustack.ai~1binding",
       "/metadata/annotations/kvcache.gpustack.ai~1injected",
       "/metadata/annotations/kvcache.gpustack.ai~1container", "/spec/containers", "/status/phase",
       "/status/podIP", "/status/conditions"}));
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
