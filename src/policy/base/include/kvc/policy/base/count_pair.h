#pragma once
// The one-line termination messages of the store image's helpers (private to policy/): two
// counts, `<first>=<n> <second>=<m>`, each an integer ≥ -1 (-1: could not be counted). The tier
// survey writes `entries=N control=M`, the tier cleanup `removed=N remaining=M`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kvc::policy {

std::string formatCountPair(std::string_view first, std::int64_t a, std::string_view second,
                            std::int64_t b);
// nullopt for anything else (a crash's log tail, an empty message); trailing blanks are ignored.
std::optional<std::pair<std::int64_t, std::int64_t>> parseCountPair(std::string_view message,
                                                                    std::string_view first,
                                                                    std::string_view second);

}  // namespace kvc::policy
