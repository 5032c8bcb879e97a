#pragma once
// The one field manager every write of the operator's controllers uses: server-side apply of
// rendered children, status writes, finalizer patches. One name, so the API server's
// managedFields say plainly which fields kvcache-operator owns.

#include <string_view>

namespace kvc::runtime {

inline constexpr std::string_view kFieldManager = "kvcache-operator";

}  // namespace kvc::runtime
