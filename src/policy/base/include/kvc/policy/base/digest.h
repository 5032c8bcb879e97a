#pragma once
// The one digest the policy layer uses (private to policy/): a member template's pod-spec hash,
// and names that must fit whatever a node is called.

#include <string>
#include <string_view>

namespace kvc::policy {

// sha256 of `text`, in lowercase hex.
std::string sha256Hex(std::string_view text);

}  // namespace kvc::policy
