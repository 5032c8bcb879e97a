#pragma once
// Small helpers for decoding typed fields out of JSON with errors that name the field path.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::api {

std::string joinPath(std::string_view path, std::string_view field);

// Absent or null -> nullopt; present with another type -> InvalidArgument naming `path`.
Result<std::optional<std::string>> optionalString(const Json& object, std::string_view field,
                                                  std::string_view path);
Result<std::optional<std::int64_t>> optionalInt(const Json& object, std::string_view field,
                                                std::string_view path);
Result<std::optional<bool>> optionalBool(const Json& object, std::string_view field,
                                         std::string_view path);
// A Kubernetes quantity: a string or an integer in JSON, returned as its text.
Result<std::optional<std::string>> optionalQuantity(const Json& object, std::string_view field,
                                                    std::string_view path);

// The member `field` when it is an object, an empty object when absent or null.
Result<Json> optionalObject(const Json& object, std::string_view field, std::string_view path);
Result<Json> optionalArray(const Json& object, std::string_view field, std::string_view path);

// A list whose items `item(element, "<path>[i]")` decodes (returning Result<T>): null gives an
// empty list, another type InvalidArgument naming `path`, the first bad item its own error.
template <typename T, typename DecodeItem>
Result<std::vector<T>> listFromJson(const Json& list, std::string_view path, DecodeItem item) {
  std::vector<T> out;
  if (list.is_null()) {
    return out;
  }
  if (!list.is_array()) {
    return Status(StatusCode::InvalidArgument, std::string(path) + " must be a list");
  }
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    KVC_ASSIGN_OR_RETURN(T decoded,
                         item(list[i], std::string(path) + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(decoded));
  }
  return out;
}

}  // namespace kvc::api
