#include "kvc/api/meta.h"

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

const Condition* findCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const Condition& condition : conditions) {
    if (condition.type == type) {
      return &condition;
    }
  }
  return nullptr;
}

Result<ObjectMeta> objectMetaFromJson(const Json& metadata, std::string_view path) {
  ObjectMeta meta;
  if (!metadata.is_null() && !metadata.is_object()) {
    return invalidArgument(std::string(path) + " must be an object");
  }
  KVC_ASSIGN_OR_RETURN(auto name, optionalString(metadata, "name", path));
  KVC_ASSIGN_OR_RETURN(auto ns, optionalString(metadata, "namespace", path));
  KVC_ASSIGN_OR_RETURN(auto uid, optionalString(metadata, "uid", path));
  KVC_ASSIGN_OR_RETURN(auto rv, optionalString(metadata, "resourceVersion", path));
  KVC_ASSIGN_OR_RETURN(auto generation, optionalInt(metadata, "generation", path));
  KVC_ASSIGN_OR_RETURN(auto deletion, optionalString(metadata, "deletionTimestamp", path));
  KVC_ASSIGN_OR_RETURN(meta.labels, stringMap(metadata, "labels", path));
  KVC_ASSIGN_OR_RETURN(meta.annotations, stringMap(metadata, "annotations", path));
  meta.name = name.value_or("");
  meta.namespace_ = ns.value_or("");
  meta.uid = uid.value_or("");
  meta.resourceVersion = rv.value_or("");
  meta.generation = generation.value_or(0);
  meta.deleting = deletion.has_value() && !deletion->empty();
  return meta;
}

Result<std::vector<Condition>> conditionsFromJson(const Json& conditions, std::string_view path) {
  std::vector<Condition> out;
  if (conditions.is_null()) {
    return out;
  }
  if (!conditions.is_array()) {
    return invalidArgument(std::string(path) + " must be a list");
  }
  for (std::size_t i = 0; i < conditions.size(); ++i) {
    const std::string at = std::string(path) + "[" + std::to_string(i) + "]";
    const Json& item = conditions[i];
    Condition condition;
    KVC_ASSIGN_OR_RETURN(auto type, optionalString(item, "type", at));
    KVC_ASSIGN_OR_RETURN(auto status, optionalString(item, "status", at));
    KVC_ASSIGN_OR_RETURN(auto reason, optionalString(item, "reason", at));
    KVC_ASSIGN_OR_RETURN(auto message, optionalString(item, "message", at));
    KVC_ASSIGN_OR_RETURN(auto ltt, optionalString(item, "lastTransitionTime", at));
    KVC_ASSIGN_OR_RETURN(auto og, optionalInt(item, "observedGeneration", at));
    if (!type || type->empty()) {
      return invalidArgument(at + ".type is required");
    }
    condition.type = *type;
    condition.status = status.value_or("Unknown");
    condition.reason = reason.value_or("");
    condition.message = message.value_or("");
    condition.lastTransitionTime = ltt.value_or("");
    condition.observedGeneration = og.value_or(0);
    out.push_back(std::move(condition));
  }
  return out;
}

std::string describeObject(const Json& object) {
  std::string kind = "object";
  std::string name;
  std::string ns;
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
        ns = it->get<std::string>();
      }
    }
  }
  if (name.empty()) {
    name = "(unnamed)";
  }
  return ns.empty() ? kind + " " + name : kind + " " + ns + "/" + name;
}

}  // namespace kvc::api
