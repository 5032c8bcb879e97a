#pragma once
// Text for error messages built from what another system answered.

#include <cstddef>
#include <string>
#include <string_view>

namespace kvc {

// Cuts a response body to at most `max_runes` UTF-8 characters for an error message, on one
// line (surrounding whitespace trimmed, newlines and tabs become spaces, other control bytes
// '?'), with "…" when something was cut. Never splits a multi-byte character, so the result is
// safe to put into JSON (a condition, an Event).
std::string excerpt(std::string_view body, std::size_t max_runes = 512);

}  // namespace kvc
