#pragma once
// References between objects: an owner reference (metadata.ownerReferences[]) and the
// KVCacheObjectReference our statuses list consumers with (`usedBy`).

#include <string>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::api {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

// {kind, namespace, name}, all three required on the wire; namespace "" names a cluster-scoped
// object, and is also what ModelDeployment entries carry (contract §1).
struct ObjectReference {
  std::string kind;
  std::string namespace_name;
  std::string name;

  // "KVCachePool/shared-dram", "ModelDeployment/team-a/qwen-chat" — for messages.
  std::string display() const;

  friend bool operator==(const ObjectReference&, const ObjectReference&) = default;
  friend auto operator<=>(const ObjectReference&, const ObjectReference&) = default;
};

Json ownerReferenceToJson(const OwnerReference& reference);
Result<std::vector<OwnerReference>> ownerReferencesFromJson(const Json& list,
                                                            std::string_view path);

Json objectReferenceToJson(const ObjectReference& reference);
Json objectReferencesToJson(const std::vector<ObjectReference>& references);
Result<std::vector<ObjectReference>> objectReferencesFromJson(const Json& list,
                                                              std::string_view path);

}  // namespace kvc::api
