#include "kvc/api/labels.h"

namespace kvc::api {

std::string label(const Json& object, std::string_view key) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return {};
  }
  auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) {
    return {};
  }
  auto it = labels->find(std::string(key));
  return it != labels->end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool matchesSelector(const Json& object, std::string_view selector) {
  std::size_t pos = 0;
  while (pos < selector.size()) {
    std::size_t comma = selector.find(',', pos);
    if (comma == std::string_view::npos) {
      comma = selector.size();
    }
    const std::string_view term = selector.substr(pos, comma - pos);
    pos = comma + 1;
    if (term.empty()) {
      continue;
    }
    const std::size_t eq = term.find('=');
    if (eq == std::string_view::npos) {
      return false;  // only equalities are supported
    }
    std::string_view value = term.substr(eq + 1);
    if (!value.empty() && value.front() == '=') {
      value.remove_prefix(1);  // "=="
    }
    if (label(object, term.substr(0, eq)) != value) {
      return false;
    }
  }
  return true;
}

}  // namespace kvc::api
