#include "kvc/policy/store/store_workload.h"

#include "kvc/api/transport.h"
#include "kvc/policy/base/workload_labels.h"
#include "kvc/policy/store/store_image.h"

namespace kvc::policy {

std::string leaderName(std::string_view backend) { return std::string(backend) + "-leader"; }
std::string memberName(std::string_view backend) { return std::string(backend) + "-member"; }
std::string memberGroupName(std::string_view backend, int group) {
  return memberName(backend) + "-" + std::to_string(group);
}
std::string leaderComponent() { return "leader"; }
std::string memberComponent(int group) { return "member-" + std::to_string(group); }

Json selectorLabels(std::string_view backend, std::string_view component) {
  return {{"app.kubernetes.io/name", "kv-cache-backend"},
          {"app.kubernetes.io/instance", std::string(backend)},
          {"app.kubernetes.io/component", std::string(component)}};
}

Json objectLabels(std::string_view backend, std::string_view component) {
  Json labels = selectorLabels(backend, component);
  labels["app.kubernetes.io/part-of"] = kPartOfWorker;
  return labels;
}

bool electing(const api::KVCacheBackend& backend) {
  return backend.spec.leader.election_backend == "Kubernetes";
}

Result<std::string> storeImage(const api::KVCacheBackend& backend, std::optional<int> group,
                               const StoreInputs& inputs) {
  if (group && *group >= 0 && static_cast<std::size_t>(*group) < backend.spec.members.size()) {
    const auto& own = backend.spec.members[static_cast<std::size_t>(*group)].image;
    if (own && !own->empty()) {
      return *own;
    }
  }
  if (backend.spec.image && !backend.spec.image->empty()) {
    return *backend.spec.image;
  }
  if (!inputs.settings_image.empty()) {
    return inputs.settings_image;
  }
  return Status(StatusCode::FailedPrecondition,
                "KVCacheBackend \"" + backend.metadata.name +
                    "\" has no store image: set spec.image, or the Setting "
                    "kv-cache-backend-image in the ConfigMap gpustack-system/gpustack-settings");
}

bool memberLaunched(const api::KVCacheBackend& backend, std::optional<int> group,
                    const StoreInputs& inputs) {
  const Result<std::string> image = storeImage(backend, group, inputs);
  return !image.ok() || projectStoreImage(*image, inputs.settings_image);
}

bool leaderLaunched(const api::KVCacheBackend& backend, const StoreInputs& inputs) {
  return memberLaunched(backend, std::nullopt, inputs);
}

bool elects(const api::KVCacheBackend& backend, const StoreInputs& inputs) {
  return electing(backend) && leaderLaunched(backend, inputs);
}

std::string pullPolicyFor(const api::KVCacheBackend& backend, std::string_view image) {
  if (backend.spec.image_pull_policy && !backend.spec.image_pull_policy->empty()) {
    return *backend.spec.image_pull_policy;
  }
  if (image.find('@') != std::string_view::npos) {
    return "IfNotPresent";
  }
  // The tag is what follows the last ':' after the last '/' (a registry's port is not a tag).
  const std::size_t slash = image.rfind('/');
  const std::size_t colon = image.rfind(':');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) {
    return "Always";
  }
  return image.substr(colon + 1) == "latest" ? "Always" : "IfNotPresent";
}

std::string memberMasterAddress(const api::KVCacheBackend& backend, int group,
                                const StoreInputs& inputs) {
  const std::string leader = leaderName(backend.metadata.name);
  if (elects(backend, inputs) && backend.spec.leader.member_addressing == "Lease" &&
      memberLaunched(backend, group, inputs)) {
    return "k8s://" + inputs.namespace_name + "/" + leader;
  }
  return leader + "." + inputs.namespace_name + ".svc:" + std::to_string(kMasterRpcPort);
}

std::string groupProtocol(const api::KVCacheBackend& backend, int group) {
  const auto& own = backend.spec.members.at(static_cast<std::size_t>(group)).transport_protocol;
  const std::string& api_spelling =
      own.empty() || own == "Auto" ? backend.spec.transport_protocol : own;
  return api::artifactProtocol(api_spelling).value_or("tcp");
}

bool groupOnHostFabric(const api::KVCacheBackend& backend, int group) {
  const std::string protocol = groupProtocol(backend, group);
  return protocol == "rdma" || protocol == "efa";
}

Json pullSecrets(const api::KVCacheBackend& backend) {
  Json out = Json::array();
  for (const std::string& name : backend.spec.image_pull_secrets) {
    out.push_back({{"name", name}});
  }
  return out;
}

}  // namespace kvc::policy
