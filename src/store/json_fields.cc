#include "internal/json_fields.h"

#include <limits>

#include "kvc/common/json_parse.h"

namespace kvc::store::internal {

StoreError malformed(std::string_view what, std::string_view detail) {
  std::string message(what);
  message += ": malformed body: ";
  message += detail;
  return StoreError(StoreErrorKind::MalformedBody, std::move(message), 200);
}

StoreResult<Json> parseJsonBody(std::string_view body, std::string_view what) {
  // Bounded in depth and linear in width (json_parse.h), whatever answers on the master's port.
  auto value = parseJson(body);
  if (!value.ok()) {
    return malformed(what, "not JSON (" + value.status().message() + "): " + excerpt(body));
  }
  return std::move(value).value();
}

StoreResult<std::int64_t> readCount(const Json& obj, std::string_view key, std::string_view what,
                                    bool* present) {
  *present = false;
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    return std::int64_t{0};
  }
  *present = true;
  const std::string field = "\"" + std::string(key) + "\"";
  if (it->is_number_unsigned()) {
    const auto v = it->get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return malformed(what, field + " is past 2^63-1: " + it->dump());
    }
    return static_cast<std::int64_t>(v);
  }
  if (it->is_number_integer()) {
    const auto v = it->get<std::int64_t>();
    if (v < 0) {
      return malformed(what, field + " is negative: " + it->dump());
    }
    return v;
  }
  return malformed(what, field + " is not a whole number: " + excerpt(it->dump(), 64));
}

StoreResult<std::int64_t> requireCount(const Json& obj, std::string_view key,
                                       std::string_view what) {
  bool present = false;
  auto value = readCount(obj, key, what, &present);
  if (value.ok() && !present) {
    return malformed(what, "\"" + std::string(key) + "\" is missing");
  }
  return value;
}

StoreResult<std::optional<std::int64_t>> optionalCount(const Json& obj, std::string_view key,
                                                       std::string_view what) {
  bool present = false;
  auto value = readCount(obj, key, what, &present);
  if (!value.ok()) {
    return value.error();
  }
  if (!present) {
    return std::optional<std::int64_t>();
  }
  return std::optional<std::int64_t>(*value);
}

StoreResult<std::string> readString(const Json& obj, std::string_view key, std::string_view what,
                                    bool required) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) {
      return malformed(what, "\"" + std::string(key) + "\" is missing");
    }
    return std::string();
  }
  if (!it->is_string()) {
    return malformed(what, "\"" + std::string(key) + "\" is not a string");
  }
  return it->get<std::string>();
}

StoreResult<std::optional<bool>> readBool(const Json& obj, std::string_view key,
                                          std::string_view what, bool required) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) {
      return malformed(what, "\"" + std::string(key) + "\" is missing");
    }
    return std::optional<bool>();
  }
  if (!it->is_boolean()) {
    return malformed(what, "\"" + std::string(key) + "\" is not a boolean");
  }
  return std::optional<bool>(it->get<bool>());
}

}  // namespace kvc::store::internal
