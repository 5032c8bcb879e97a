#include "kvc/api/meta.h"

#include <algorithm>

#include "kvc/api/decode.h"

namespace kvc::api {
namespace {

Result<std::map<std::string, std::string>> stringMap(const Json& metadata, std::string_view field,
                                                     std::string_view path) {
  KVC_ASSIGN_OR_RETURN(Json object, optionalObject(metadata, field, path));
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : object.items()) {
    if (!value.is_string()) {
      return invalidArgument(joinPath(path, field) + "[\"" + key + "\"] must be a string, not " +
                             std::string(value.type_name()) + "; quote the value in YAML");
    }
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

}  // namespace

Result<ObjectMeta> objectMetaFromJson(const Json& metadata, std::string_view path) {
  ObjectMeta meta;
  if (!metadata.is_null() && !metadata.is_object()) {
    return invalidArgument(std::string(path) + " must be an object");
  }
  KVC_ASSIGN_OR_RETURN(auto name, optionalString(metadata, "name", path));
  KVC_ASSIGN_OR_RETURN(auto namespace_name, optionalString(metadata, "namespace", path));
  KVC_ASSIGN_OR_RETURN(auto uid, optionalString(metadata, "uid", path));
  KVC_ASSIGN_OR_RETURN(auto rv, optionalString(metadata, "resourceVersion", path));
  KVC_ASSIGN_OR_RETURN(auto generation, optionalInt(metadata, "generation", path));
  KVC_ASSIGN_OR_RETURN(auto created, optionalString(metadata, "creationTimestamp", path));
  KVC_ASSIGN_OR_RETURN(auto deletion, optionalString(metadata, "deletionTimestamp", path));
  KVC_ASSIGN_OR_RETURN(Json finalizers, optionalArray(metadata, "finalizers", path));
  for (std::size_t i = 0; i < finalizers.size(); ++i) {
    if (!finalizers[i].is_string()) {
      return invalidArgument(joinPath(path, "finalizers") + "[" + std::to_string(i) +
                             "] must be a string");
    }
    meta.finalizers.push_back(finalizers[i].get<std::string>());
  }
  KVC_ASSIGN_OR_RETURN(
      meta.owner_references,
      ownerReferencesFromJson(
          metadata.is_object() ? metadata.value("ownerReferences", Json()) : Json(),
          joinPath(path, "ownerReferences")));
  KVC_ASSIGN_OR_RETURN(meta.labels, stringMap(metadata, "labels", path));
  KVC_ASSIGN_OR_RETURN(meta.annotations, stringMap(metadata, "annotations", path));
  meta.name = name.value_or("");
  meta.namespace_name = namespace_name.value_or("");
  meta.uid = uid.value_or("");
  meta.resource_version = rv.value_or("");
  meta.generation = generation.value_or(0);
  meta.creation_timestamp = created.value_or("");
  meta.deletion_timestamp = deletion.value_or("");
  meta.deleting = !meta.deletion_timestamp.empty();
  return meta;
}

bool hasFinalizer(const ObjectMeta& meta, std::string_view finalizer) {
  return std::find(meta.finalizers.begin(), meta.finalizers.end(), finalizer) !=
         meta.finalizers.end();
}

std::string describeObject(const Json& object) {
  std::string kind = "object";
  std::string name;
  std::string namespace_name;
  if (object.is_object()) {
    if (auto it = object.find("kind"); it != object.end() && it->is_string()) {
      kind = it->get<std::string>();
    }
    if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
      if (auto it = meta->find("name"); it != meta->end() && it->is_string()) {
        name = it->get<std::string>();
      } else if (auto gen = meta->find("generateName"); gen != meta->end() && gen->is_string()) {
        name = gen->get<std::string>() + "*";
      }
      if (auto it = meta->find("namespace"); it != meta->end() && it->is_string()) {
        namespace_name = it->get<std::string>();
      }
    }
  }
  if (name.empty()) {
    name = "(unnamed)";
  }
  return namespace_name.empty() ? kind + " " + name : kind + " " + namespace_name + "/" + name;
}

}  // namespace kvc::api
