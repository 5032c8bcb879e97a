#pragma once
// Generated at configure time from data/engine-flags/*.txt (see src/policy/CMakeLists.txt).

#include <span>
#include <string_view>

#include "kvc/policy/inject/flag_spelling.h"

namespace kvc::policy::generated {

// Every release's table for "vllm" or "sglang", newest first.
std::span<const EngineCli> engineClis(std::string_view engine);

}  // namespace kvc::policy::generated
