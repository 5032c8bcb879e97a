#pragma once
// Object metadata, shared by every kind we read (conditions: condition.h).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/reference.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::api {

inline constexpr std::string_view kGroup = "worker.gpustack.ai";
inline constexpr std::string_view kVersion = "v1";
inline constexpr std::string_view kApiVersion = "worker.gpustack.ai/v1";

struct ObjectMeta {
  std::string name;
  std::string namespace_name;
  std::string uid;
  std::string resource_version;
  std::int64_t generation = 0;
  std::string creation_timestamp;  // RFC 3339
  std::string deletion_timestamp;  // RFC 3339; "" while the object is live
  bool deleting = false;           // deletion_timestamp is set
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> finalizers;
  std::vector<OwnerReference> owner_references;
};

// Decoder. `path` prefixes field names in errors ("metadata.labels[\"x\"]").
Result<ObjectMeta> objectMetaFromJson(const Json& metadata, std::string_view path);

// True when `meta` carries the finalizer.
bool hasFinalizer(const ObjectMeta& meta, std::string_view finalizer);

// "Kind namespace/name" or "Kind name", for messages.
std::string describeObject(const Json& object);

}  // namespace kvc::api
