#include "kvc/api/decode.h"

namespace kvc::api {
namespace {

const Json* member(const Json& object, std::string_view field) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) {
    return nullptr;
  }
  return &*it;
}

Status wrongType(std::string_view path, std::string_view field, std::string_view expected,
                 const Json& got) {
  return invalidArgument(joinPath(path, field) + " must be " + std::string(expected) + ", not " +
                         std::string(got.type_name()));
}

}  // namespace

std::string joinPath(std::string_view path, std::string_view field) {
  if (path.empty()) {
    return std::string(field);
  }
  return std::string(path) + "." + std::string(field);
}

Result<std::optional<std::string>> optionalString(const Json& object, std::string_view field,
                                                  std::string_view path) {
  const Json* value = member(object, field);
  if (value == nullptr) {
    return std::optional<std::string>();
  }
  if (!value->is_string()) {
    return wrongType(path, field, "a string", *value);
  }
  return std::optional<std::string>(value->get<std::string>());
}

Result<std::optional<std::int64_t>> optionalInt(const Json& object, std::string_view field,
                                                std::string_view path) {
  const Json* value = member(object, field);
  if (value == nullptr) {
    return std::optional<std::int64_t>();
  }
  if (!value->is_number_integer()) {
    return wrongType(path, field, "an integer", *value);
  }
  return std::optional<std::int64_t>(value->get<std::int64_t>());
}

Result<std::optional<bool>> optionalBool(const Json& object, std::string_view field,
                                         std::string_view path) {
  const Json* value = member(object, field);
  if (value == nullptr) {
    return std::optional<bool>();
  }
  if (!value->is_boolean()) {
    return wrongType(path, field, "a boolean", *value);
  }
  return std::optional<bool>(value->get<bool>());
}

Result<std::optional<std::string>> optionalQuantity(const Json& object, std::string_view field,
                                                    std::string_view path) {
  const Json* value = member(object, field);
  if (value == nullptr) {
    return std::optional<std::string>();
  }
  if (value->is_string()) {
    return std::optional<std::string>(value->get<std::string>());
  }
  if (value->is_number_integer()) {
    return std::optional<std::string>(value->dump());
  }
  return wrongType(path, field, "a quantity (a string such as \"8Gi\")", *value);
}

Result<Json> optionalObject(const Json& object, std::string_view field, std::string_view path) {
  const Json* value = member(object, field);
  if (value == nullptr) {
    return Json::object();
  }
  if (!value->is_object()) {
    return wrongType(path, field, "an object", *value);
  }
  return *value;
}

Result<Json> optionalArray(const Json& object, std::string_view field, std::string_view path) {
  const Json* value = member(object, field);
  if (value == nullptr) {
    return Json::array();
  }
  if (!value->is_array()) {
    return wrongType(path, field, "a list", *value);
  }
  return *value;
}

}  // namespace kvc::api
