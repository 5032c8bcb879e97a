#pragma once
// Private helpers for the wording of refusal messages.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/quantity.h"

namespace kvc::policy {

// "name" with double quotes, for the object, key or value a message names.
inline std::string inQuotes(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  out += text;
  out += '"';
  return out;
}

// "a, b, c", or `empty` for no items.
inline std::string commaList(const std::vector<std::string>& items,
                             std::string_view empty = "none") {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) {
      out += ", ";
    }
    out += item;
  }
  return out.empty() ? std::string(empty) : out;
}

// "8Gi (8589934592 bytes)", or "512 bytes" when the unit form is the plain number.
inline std::string bytesText(std::int64_t bytes) {
  const std::string si = formatBinarySI(bytes);
  return si == std::to_string(bytes) ? si + " bytes"
                                     : si + " (" + std::to_string(bytes) + " bytes)";
}

// "1 write", "3 writes": a count with its noun, plural but for one.
inline std::string plural(std::int64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

}  // namespace kvc::policy
