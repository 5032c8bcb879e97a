#include "kvc/kube/discovery.h"

#include <string>

namespace kvc::kube {

ApiResult<std::vector<ResourceType>> discoverResources(const Client& client, std::string_view group,
                                                       std::string_view version,
                                                       std::stop_token stop) {
  const std::string path = group.empty()
                               ? "/api/" + std::string(version)
                               : "/apis/" + std::string(group) + "/" + std::string(version);
  auto list = client.getPath(path, std::move(stop));
  if (!list.ok()) {
    return list.error();
  }
  auto resources = list->find("resources");
  if (resources == list->end() || !resources->is_array()) {
    return ApiError(ErrorReason::Decode, path + ": an APIResourceList has no resources array");
  }
  std::vector<ResourceType> out;
  for (const Json& r : *resources) {
    if (!r.is_object() || !r.contains("name") || !r.contains("kind") || !r.at("name").is_string() ||
        !r.at("kind").is_string()) {
      continue;
    }
    const std::string name = r.at("name").get<std::string>();
    if (name.find('/') != std::string::npos) {
      continue;  // a subresource
    }
    ResourceType type;
    type.group = std::string(group);
    type.version = std::string(version);
    type.kind = r.at("kind").get<std::string>();
    type.plural = name;
    type.namespaced = r.value("namespaced", false);
    out.push_back(std::move(type));
  }
  return out;
}

ApiResult<ResourceType> discoverResource(const Client& client, std::string_view group,
                                         std::string_view version, std::string_view kind,
                                         std::stop_token stop) {
  auto all = discoverResources(client, group, version, std::move(stop));
  if (!all.ok()) {
    return all.error();
  }
  for (ResourceType& r : *all) {
    if (r.kind == kind) {
      return std::move(r);
    }
  }
  return ApiError(
      ErrorReason::NotFound,
      std::string(kind) + " is not served in " +
          (group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version)),
      404);
}

}  // namespace kvc::kube
