#include "kvc/runtime/observed_generation.h"

#include <spdlog/spdlog.h>

namespace kvc::runtime {
namespace {

std::int64_t observedGeneration(const Json& object) {
  auto status = object.find("status");
  if (status == object.end() || !status->is_object()) {
    return 0;
  }
  auto it = status->find("observedGeneration");
  return it != status->end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

}  // namespace

Json observedGenerationIntent(const Json& object) {
  Json metadata = {{"name", kube::object::name(object)}};
  const std::string ns = kube::object::namespaceName(object);
  if (!ns.empty()) {
    metadata["namespace"] = ns;
  }
  return Json{{"apiVersion", object.value("apiVersion", std::string())},
              {"kind", object.value("kind", std::string())},
              {"metadata", std::move(metadata)},
              {"status", {{"observedGeneration", kube::object::generation(object)}}}};
}

Result<Action> ObservedGenerationReconciler::reconcile(const Request& request,
                                                       std::stop_token stop) {
  ObjectPtr object = cache_.get(request.key());
  if (!object) {
    return Action::done();  // deleted: nothing to keep in step
  }
  const std::int64_t generation = kube::object::generation(*object);
  if (generation == 0 || observedGeneration(*object) == generation) {
    return Action::done();
  }
  kube::Api api = api_.inNamespace(request.namespace_name);
  auto applied = api.applyStatus(observedGenerationIntent(*object), kObservedGenerationManager,
                                 /*force=*/true, stop);
  if (!applied.ok()) {
    if (applied.error().isNotFound()) {
      return Action::done();  // deleted since the cache saw it
    }
    return applied.status().withContext("observedGeneration of " + request.key());
  }
  spdlog::debug("observed-generation: {} now at {}", request.key(), generation);
  return Action::done();
}

}  // namespace kvc::runtime
