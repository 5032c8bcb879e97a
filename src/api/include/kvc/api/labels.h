#pragma once
// An object's labels as the API server reads them, on raw object JSON: one label's value, and
// whether the labels match an equality-based label selector. Pure; shared by the runtime (the
// children it prunes), the controllers and the policy layer (the nodes a member group selects).

#include <string>
#include <string_view>

#include "kvc/common/json.h"

namespace kvc::api {

// The label `key` of `object` ("" when absent or not a string).
std::string label(const Json& object, std::string_view key);

// True when the labels of `object` match every `key=value` (or `key==value`) term of `selector`,
// a comma-separated list of equalities; "" matches everything, and any other kind of term
// (a set or an inequality) matches nothing.
bool matchesSelector(const Json& object, std::string_view selector);

}  // namespace kvc::api
