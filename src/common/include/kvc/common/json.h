#pragma once
// The JSON value type used everywhere objects pass through untouched.
//
// An ordered object keeps the keys of a user's manifest in the order they were written, so what
// `kvcache inject` prints and what the webhook diffs against reads like the input, and nothing
// the user wrote is reordered or lost on the way through.

#include <nlohmann/json.hpp>

namespace kvc {

using Json = nlohmann::ordered_json;

}  // namespace kvc
