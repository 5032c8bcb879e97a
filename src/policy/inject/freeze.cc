#include "kvc/policy/inject/freeze.h"

#include <optional>

#include "kvc/policy/inject/keys.h"

namespace kvc::policy {
namespace {

constexpr std::string_view kReplace = "let the Pod be replaced";

std::optional<std::string> metadataValue(const Json& pod, std::string_view map,
                                         std::string_view key) {
  if (!pod.is_object()) {
    return std::nullopt;
  }
  auto meta = pod.find("metadata");
  if (meta == pod.end() || !meta->is_object()) {
    return std::nullopt;
  }
  auto entries = meta->find(map);
  if (entries == meta->end() || !entries->is_object()) {
    return std::nullopt;
  }
  auto it = entries->find(key);
  if (it == entries->end() || !it->is_string()) {
    return std::nullopt;
  }
  return it->get<std::string>();
}

bool optedIn(const Json& pod) {
  return metadataValue(pod, "labels", kLabelInject) == std::optional<std::string>("true");
}

std::string field(std::string_view map, std::string_view key) {
  return "metadata." + std::string(map) + "[" + std::string(key) + "]";
}

}  // namespace

std::vector<FreezeViolation> checkFreeze(const Json& old_pod, const Json& new_pod) {
  std::vector<FreezeViolation> violations;
  const bool before = optedIn(old_pod);
  const bool after = optedIn(new_pod);
  if (!before && !after) {
    return violations;
  }
  if (!before && after) {
    violations.push_back(
        {field("labels", kLabelInject),
         "adding the label to an existing Pod is not allowed: injection runs at CREATE and only "
         "there, so the Pod would carry the label that says it uses a cache and none of the "
         "configuration; set the label on the workload's Pod template and " +
             std::string(kReplace)});
    return violations;  // never injected: there is no record to protect
  }
  if (before && !after) {
    violations.push_back(
        {field("labels", kLabelInject),
         "removing or changing the label of an injected Pod is not allowed: nothing un-injects "
         "a Pod, and its injected args, env and volume stay; set the label on the workload's "
         "Pod template instead and " +
             std::string(kReplace)});
  }
  const struct {
    std::string_view key;
    std::string_view why;
  } k_frozen[] = {
      {kAnnotationInjected,
       "the injection record must stay as the webhook wrote it: an edited record would be a "
       "record of a decision nobody made"},
      {kAnnotationClientConfig,
       "the client configuration must stay as the webhook wrote it: the file at "
       "/etc/gpustack/kvcache/mooncake.json is a projection of this annotation, so an edit would "
       "swap the master address, transport and segment sizes under a running container"},
  };
  for (const auto& frozen : k_frozen) {
    const auto was = metadataValue(old_pod, "annotations", frozen.key);
    const auto is = metadataValue(new_pod, "annotations", frozen.key);
    if (was == is) {
      continue;
    }
    const std::string_view action = !is ? "removing" : !was ? "adding" : "editing";
    violations.push_back({field("annotations", frozen.key),
                          std::string(action) + " it is not allowed: " + std::string(frozen.why) +
                              "; " + std::string(kReplace)});
  }
  return violations;
}

std::vector<FreezeViolation> checkBindingWrites(const Json& binding) {
  std::vector<FreezeViolation> violations;
  const struct {
    std::string_view map;
    std::string_view key;
  } k_keys[] = {
      {"labels", kLabelInject},
      {"annotations", kAnnotationInjected},
      {"annotations", kAnnotationClientConfig},
  };
  for (const auto& k : k_keys) {
    if (!metadataValue(binding, k.map, k.key)) {
      continue;
    }
    violations.push_back(
        {field(k.map, k.key),
         "a Binding must not write it: the API server copies a Binding's labels and "
         "annotations onto its Pod, and this one is written only when the Pod is created (the "
         "label by its owner, the annotations by the injection webhook); bind the Pod without "
         "it"});
  }
  return violations;
}

std::string freezeMessage(std::string_view pod_name,
                          const std::vector<FreezeViolation>& violations) {
  std::string message = "Pod \"" + std::string(pod_name) + "\" is invalid: ";
  const bool several = violations.size() > 1;
  if (several) {
    message += "[";
  }
  for (std::size_t i = 0; i < violations.size(); ++i) {
    message += i == 0 ? "" : ", ";
    message += violations[i].field + ": Forbidden: " + violations[i].message;
  }
  if (several) {
    message += "]";
  }
  return message;
}

}  // namespace kvc::policy
