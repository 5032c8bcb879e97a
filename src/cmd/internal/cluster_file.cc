#include "internal/cluster_file.h"

#include "internal/manifest.h"
#include "kvc/api/kvcache.h"
#include "kvc/api/meta.h"

namespace kvc::cmd {
namespace {

Status addObject(const Json& object, ClusterFile& out, const std::string& where) {
  if (!object.is_object()) {
    return invalidArgument(where + ": the document is not a mapping");
  }
  const std::string kind = object.value("kind", std::string());
  const std::string api_version = object.value("apiVersion", std::string());
  auto wrap = [&](const Status& status) {
    return status.withContext(where + ": " + api::describeObject(object));
  };
  if (kind == "List" || kind.ends_with("List")) {
    const Json items = object.value("items", Json::array());
    for (std::size_t i = 0; i < items.size(); ++i) {
      KVC_RETURN_IF_ERROR(addObject(items[i], out, where + " items[" + std::to_string(i) + "]"));
    }
    return okStatus();
  }
  const bool ours = api_version.empty() || api_version == api::kApiVersion;
  if (kind == api::kKindBinding && ours) {
    auto binding = api::bindingFromJson(object);
    if (!binding.ok()) {
      return wrap(binding.status());
    }
    if (binding->metadata.namespace_name.empty()) {
      return invalidArgument(where + ": " + api::describeObject(object) +
                             ": metadata.namespace is required for a KVCachePoolBinding");
    }
    out.snapshot.add(std::move(binding).value());
  } else if (kind == api::kKindPool && ours) {
    auto pool = api::poolFromJson(object);
    if (!pool.ok()) {
      return wrap(pool.status());
    }
    out.snapshot.add(std::move(pool).value());
  } else if (kind == api::kKindBackend && ours) {
    auto backend = api::backendFromJson(object);
    if (!backend.ok()) {
      return wrap(backend.status());
    }
    out.snapshot.add(std::move(backend).value());
  } else if (kind == "ConfigMap" && object.value(Json::json_pointer("/metadata/name"),
                                                 std::string()) == api::kSettingsConfigMap) {
    auto settings = api::settingsFromConfigMap(object);
    if (!settings.ok()) {
      return wrap(settings.status());
    }
    out.settings = settings->settings;
    for (const std::string& warning : settings->warnings) {
      out.warnings.push_back(where + ": " + warning);
    }
  } else if (kind.empty()) {
    return invalidArgument(where + ": the document has no kind");
  } else {
    out.warnings.push_back(where + ": " + api::describeObject(object) +
                           " is not one the cluster file holds (KVCacheBackend, KVCachePool, "
                           "KVCachePoolBinding, ConfigMap gpustack-settings); ignored");
  }
  return okStatus();
}

}  // namespace

Result<ClusterFile> loadClusterFile(const std::string& path) {
  KVC_ASSIGN_OR_RETURN(std::vector<YamlDocument> documents, loadManifest(path));
  ClusterFile out;
  for (const YamlDocument& document : documents) {
    KVC_RETURN_IF_ERROR(addObject(document.value, out, documentPosition(path, document)));
  }
  return out;
}

}  // namespace kvc::cmd
