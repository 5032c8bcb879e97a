#pragma once
// Object metadata and conditions, shared by every kind we read.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::api {

inline constexpr std::string_view kGroup = "worker.gpustack.ai";
inline constexpr std::string_view kVersion = "v1";
inline constexpr std::string_view kApiVersion = "worker.gpustack.ai/v1";

struct ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resourceVersion;
  std::int64_t generation = 0;
  bool deleting = false;  // metadata.deletionTimestamp is set
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};

struct Condition {
  std::string type;
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;
  std::string message;
  std::string lastTransitionTime;
  std::int64_t observedGeneration = 0;
};

// The condition of that type, or nullptr when the object does not report it.
const Condition* findCondition(const std::vector<Condition>& conditions, std::string_view type);

// Decoders. `path` prefixes field names in errors ("status.conditions[2].type").
Result<ObjectMeta> objectMetaFromJson(const Json& metadata, std::string_view path);
Result<std::vector<Condition>> conditionsFromJson(const Json& conditions, std::string_view path);

// "Kind namespace/name" or "Kind name", for messages.
std::string describeObject(const Json& object);

}  // namespace kvc::api
