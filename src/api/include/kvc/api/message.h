#pragma once
// The bounds every status message keeps (contract §1 "Message bounds"), in one place:
//
//   name lists         at most 20 names, then "… and N more"
//   detail             at most 2048 runes, then "… (truncated)" (an error or a reading quoted
//                      inside a message)
//   master responses   at most 512 runes (store::excerpt already cuts them there)
//   any message        at most 32 KiB (setCondition and phase messages apply it)
//
// Cuts never split a UTF-8 character, so a bounded message is still valid JSON text.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvc::api {

inline constexpr std::size_t kMaxListedNames = 20;
inline constexpr std::size_t kMaxDetailRunes = 2048;
inline constexpr std::size_t kMaxQuotedResponseRunes = 512;
inline constexpr std::size_t kMaxMessageBytes = 32 * 1024;

// "a, b and c"; past kMaxListedNames: "a, b, … t … and 5 more" (the first 20, then the count).
std::string nameList(const std::vector<std::string>& names);
// The detail cut to kMaxDetailRunes runes, with " … (truncated)" when something was cut.
std::string boundDetail(std::string_view detail);
// The message cut to kMaxMessageBytes bytes (marker included) on a character boundary.
std::string boundMessage(std::string_view message);

}  // namespace kvc::api
