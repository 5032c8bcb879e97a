#include "kvc/controllers/indexes.h"

#include "kvc/kube/client.h"
#include "kvc/policy/keys.h"

namespace kvc::controllers {
namespace {

std::string stringAt(const Json& object, std::initializer_list<const char*> path) {
  const Json* at = &object;
  for (const char* key : path) {
    if (!at->is_object()) {
      return {};
    }
    auto it = at->find(key);
    if (it == at->end()) {
      return {};
    }
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : std::string();
}

}  // namespace

std::vector<std::string> podBinding(const Json& pod) {
  const std::string binding =
      stringAt(pod, {"metadata", "annotations", policy::kAnnotationBinding.data()});
  if (binding.empty()) {
    return {};
  }
  return {kube::object::namespaceName(pod) + "/" + binding};
}

runtime::Transform heldPodProjection() {
  return runtime::keepFields({"/metadata/annotations/kvcache.gpustack.ai~1binding", "/status/phase"});
}

std::string heldPodSelector() { return std::string(policy::kLabelInject) + "=true"; }

bool podActive(const Json& pod) {
  const std::string phase = stringAt(pod, {"status", "phase"});
  return phase != "Succeeded" && phase != "Failed";
}

}  // namespace kvc::controllers
