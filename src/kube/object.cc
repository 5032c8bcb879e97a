#include "kvc/kube/object.h"

namespace kvc::kube {
namespace {

std::string_view metaString(const Json& obj, const char* key) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) {
    return {};
  }
  auto it = meta->find(key);
  if (it == meta->end() || !it->is_string()) {
    return {};
  }
  return it->get_ref<const std::string&>();
}
}  // namespace

namespace object {

std::string name(const Json& obj) { return std::string(metaString(obj, "name")); }
std::string namespaceName(const Json& obj) { return std::string(metaString(obj, "namespace")); }
std::string uid(const Json& obj) { return std::string(metaString(obj, "uid")); }
std::string resourceVersion(const Json& obj) {
  return std::string(metaString(obj, "resourceVersion"));
}

std::int64_t generation(const Json& obj) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) {
    return 0;
  }
  auto it = meta->find("generation");
  return it != meta->end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

bool isDeleting(const Json& obj) { return !metaString(obj, "deletionTimestamp").empty(); }

std::string key(std::string_view namespace_name, std::string_view name) {
  if (namespace_name.empty()) {
    return std::string(name);
  }
  std::string out;
  out.reserve(namespace_name.size() + 1 + name.size());
  out += namespace_name;
  out += '/';
  out += name;
  return out;
}

std::string key(const Json& obj) {
  return key(metaString(obj, "namespace"), metaString(obj, "name"));
}

std::pair<std::string, std::string> splitKey(std::string_view key) {
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) {
    return {std::string(), std::string(key)};
  }
  return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

}  // namespace object

}  // namespace kvc::kube
