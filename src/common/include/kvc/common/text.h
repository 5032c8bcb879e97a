#pragma once
// Text for error messages built from what another system answered.

#include <cstddef>
#include <string>
#include <string_view>

namespace kvc {

// Cuts a response body to at most `max_runes` UTF-8 characters for an error message, on one
// line (surrounding whitespace trimmed, newlines and tabs become spaces, other control bytes and
// bytes that are not well-formed UTF-8 '?'), with "…" when something was cut. Never splits a
// multi-byte character, so the result is safe to put into JSON (a condition, an Event).
std::string excerpt(std::string_view body, std::size_t max_runes = 512);

// The text cut to at most `max_runes` UTF-8 characters, `marker` appended when something was cut
// (the marker counts against the budget). Never splits a character.
std::string truncateRunes(std::string_view text, std::size_t max_runes, std::string_view marker);
// The text cut to at most `max_bytes` bytes, `marker` included, on a character boundary.
std::string truncateBytes(std::string_view text, std::size_t max_bytes, std::string_view marker);
// The number of UTF-8 characters in `text` (a stray byte counts as one).
std::size_t runeCount(std::string_view text);
// True when `text` is well-formed UTF-8 (RFC 3629), as a JSON string must be.
bool isUtf8(std::string_view text);

}  // namespace kvc
