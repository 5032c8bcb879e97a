#pragma once
// Private helpers for reading objects as the API server returns them: a missing key, or a value
// of another type, reads as absent instead of throwing, because a Pod seen through an informer
// may lack any field a decision looks at (a Pod not yet scheduled has no status.hostIP).

#include <string>
#include <string_view>

#include "kvc/common/json.h"

namespace kvc::policy {

// object[key], or null when `object` is not an object or has no such key.
inline const Json& field(const Json& object, std::string_view key) {
  static const Json kNull;
  if (!object.is_object()) {
    return kNull;
  }
  auto it = object.find(std::string(key));
  return it == object.end() ? kNull : *it;
}

// object[key] as a string, or "" when it is absent or not a string.
inline std::string text(const Json& object, std::string_view key) {
  const Json& value = field(object, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

}  // namespace kvc::policy
