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
  return listFromJson<OwnerReference>(
      list, path, [](const Json& item, const std::string& at) -> Result<OwnerReference> {
        KVC_ASSIGN_OR_RETURN(auto api_version, optionalString(item, "apiVersion", at));
        KVC_ASSIGN_OR_RETURN(auto kind, optionalString(item, "kind", at));
        KVC_ASSIGN_OR_RETURN(auto name, optionalString(item, "name", at));
        KVC_ASSIGN_OR_RETURN(auto uid, optionalString(item, "uid", at));
        KVC_ASSIGN_OR_RETURN(auto controller, optionalBool(item, "controller", at));
        KVC_ASSIGN_OR_RETURN(auto block, optionalBool(item, "blockOwnerDeletion", at));
        OwnerReference reference;
        reference.api_version = api_version.value_or("");
        reference.kind = kind.value_or("");
        reference.name = name.value_or("");
        reference.uid = uid.value_or("");
        reference.controller = controller.value_or(false);
        reference.block_owner_deletion = block.value_or(false);
        return reference;
      });
}

Json objectReferenceToJson(const ObjectReference& reference) {
  return Json{
      {"kind", reference.kind}, {"namespace", reference.namespace_name}, {"name", reference.name}};
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
  return listFromJson<ObjectReference>(
      list, path, [](const Json& item, const std::string& at) -> Result<ObjectReference> {
        KVC_ASSIGN_OR_RETURN(auto kind, optionalString(item, "kind", at));
        KVC_ASSIGN_OR_RETURN(auto namespace_name, optionalString(item, "namespace", at));
        KVC_ASSIGN_OR_RETURN(auto name, optionalString(item, "name", at));
        return ObjectReference{kind.value_or(""), namespace_name.value_or(""), name.value_or("")};
      });
}

}  // namespace kvc::api
