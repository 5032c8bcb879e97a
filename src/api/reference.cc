#include "kvc/api/reference.h"

#include "kvc/api/decode.h"

namespace kvc::api {

std::string ObjectReference::display() const {
  return namespace_name.empty() ? kind + "/" + name : kind + "/" + namespace_name + "/" + name;
}

Json ownerReferenceToJson(const OwnerReference& reference) {
  return Json{{"apiVersion", reference.api_version},
              {"kind", reference.kind},
              {"name", reference.name},
              {"uid", reference.uid},
              {"controller", reference.controller},
              {"blockOwnerDeletion", reference.block_owner_deletion}};
}

Result<std::vector<OwnerReference>> ownerReferencesFromJson(const Json& list,
                                                            std::string_view path) {
  std::vector<OwnerReference> out;
  if (list.is_null()) {
    return out;
  }
  if (!list.is_array()) {
    return invalidArgument(std::string(path) + " must be a list");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = std::string(path) + "[" + std::to_string(i) + "]";
    OwnerReference reference;
    KVC_ASSIGN_OR_RETURN(auto api_version, optionalString(list[i], "apiVersion", at));
    KVC_ASSIGN_OR_RETURN(auto kind, optionalString(list[i], "kind", at));
    KVC_ASSIGN_OR_RETURN(auto name, optionalString(list[i], "name", at));
    KVC_ASSIGN_OR_RETURN(auto uid, optionalString(list[i], "uid", at));
    KVC_ASSIGN_OR_RETURN(auto controller, optionalBool(list[i], "controller", at));
    KVC_ASSIGN_OR_RETURN(auto block, optionalBool(list[i], "blockOwnerDeletion", at));
    reference.api_version = api_version.value_or("");
    reference.kind = kind.value_or("");
    reference.name = name.value_or("");
    reference.uid = uid.value_or("");
    reference.controller = controller.value_or(false);
    reference.block_owner_deletion = block.value_or(false);
    out.push_back(std::move(reference));
  }
  return out;
}

Json objectReferenceToJson(const ObjectReference& reference) {
  return Json{{"kind", reference.kind},
              {"namespace", reference.namespace_name},
              {"name", reference.name}};
}

Json objectReferencesToJson(const std::vector<ObjectReference>& references) {
  Json out = Json::array();
  for (const ObjectReference& reference : references) {
    out.push_back(objectReferenceToJson(reference));
  }
  return out;
}

Result<std::vector<ObjectReference>> objectReferencesFromJson(const Json& list,
                                                              std::string_view path) {
  std::vector<ObjectReference> out;
  if (list.is_null()) {
    return out;
  }
  if (!list.is_array()) {
    return invalidArgument(std::string(path) + " must be a list");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = std::string(path) + "[" + std::to_string(i) + "]";
    KVC_ASSIGN_OR_RETURN(auto kind, optionalString(list[i], "kind", at));
    KVC_ASSIGN_OR_RETURN(auto ns, optionalString(list[i], "namespace", at));
    KVC_ASSIGN_OR_RETURN(auto name, optionalString(list[i], "name", at));
    out.push_back({kind.value_or(""), ns.value_or(""), name.value_or("")});
  }
  return out;
}

}  // namespace kvc::api
