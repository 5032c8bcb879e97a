#pragma once
// The JSON value type used everywhere objects pass through untouched.
//
// An ordered object keeps the keys of a user's manifest in the order they were written, so what
// `kvcache inject` prints and what the webhook diffs against reads like the input, and nothing
// the user wrote is reordered or lost on the way through.

#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

namespace kvc {

using Json = nlohmann::ordered_json;

// The string at `path` ({"spec", "poolRef", "name"}), or "" when a step is missing or the value
// is not a string. For reads of raw objects that must not throw (index functions, predicates).
inline std::string stringAt(const Json& object, std::initializer_list<const char*> path) {
  const Json* at = &object;
  for (const char* key : path) {
    if (!at->is_object()) {
      return {};
    }
    auto it = at->find(key);
    if (it == at->end()) {
      return {};
    }
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : std::string();
}

}  // namespace kvc
