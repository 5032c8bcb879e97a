#include "internal/cluster_file.h"

#include "internal/manifest.h"
#include "kvc/api/kvcache.h"
#include "kvc/api/meta.h"

namespace kvc::cmd {
namespace {

// A top-level string field, "" when absent. Json::value() would throw on `kind: 5`.
Result<std::string> stringField(const Json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return std::string();
  }
  if (!it->is_string()) {
    return invalidArgument(where + ": " + key + " must be a string, not " + it->type_name());
  }
  return it->get<std::string>();
}

Status addObject(const Json& object, ClusterFile& out, const std::string& where) {
  if (!object.is_object()) {
    return invalidArgument(where + ": the document is not a mapping");
  }
  KVC_ASSIGN_OR_RETURN(const std::string kind, stringField(object, "kind", where));
  KVC_ASSIGN_OR_RETURN(const std::string api_version, stringField(object, "apiVersion", where));
  auto wrap = [&](const Status& status) {
    return status.withContext(where + ": " + api::describeObject(object));
  };
  if (kind == "List" || kind.ends_with("List")) {
    const auto items = object.find("items");
    if (items == object.end() || items->is_null()) {
      return okStatus();
    }
    if (!items->is_array()) {
      return invalidArgument(where + ": " + kind + ".items must be a list");
    }
    for (std::size_t i = 0; i < items->size(); ++i) {
      KVC_RETURN_IF_ERROR(addObject((*items)[i], out, where + " items[" + std::to_string(i) + "]"));
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
  } else if (kind == "ConfigMap" &&
             stringAt(object, {"metadata", "name"}) == api::kSettingsConfigMap) {
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
  KVC_ASSIGN_OR_RETURN(std::string text, readSource(path));
  return parseClusterFile(text, path);
}

Result<ClusterFile> parseClusterFile(std::string_view text, const std::string& path) {
  KVC_ASSIGN_OR_RETURN(std::vector<YamlDocument> documents, parseManifest(text, path));
  ClusterFile out;
  for (const YamlDocument& document : documents) {
    KVC_RETURN_IF_ERROR(addObject(document.value, out, documentPosition(path, document)));
  }
  return out;
}

}  // namespace kvc::cmd
