#include "kvc/common/quantity.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <limits>
#include <utility>

namespace kvc {
namespace {

// Wide enough that "8Ei" times its fraction digits cannot overflow before the range check.
__extension__ typedef unsigned __int128 Wide;

struct Suffix {
  std::string_view text;
  int base;      // 2 or 10
  int exponent;  // power of 1024 (base 2) or of 10 (base 10)
};

constexpr std::array<Suffix, 14> kSuffixes{{
    {"Ki", 2, 1},
    {"Mi", 2, 2},
    {"Gi", 2, 3},
    {"Ti", 2, 4},
    {"Pi", 2, 5},
    {"Ei", 2, 6},
    {"m", 10, -3},
    {"k", 10, 3},
    {"M", 10, 6},
    {"G", 10, 9},
    {"T", 10, 12},
    {"P", 10, 15},
    {"E", 10, 18},
    {"", 10, 0},
}};

Status malformed(std::string_view text, std::string_view why) {
  return invalidArgument("quantity \"" + std::string(text) + "\" " + std::string(why) +
                         "; write a whole number of bytes or a number with a suffix such as "
                         "8Gi, 512Mi or 16G");
}

}  // namespace

Result<std::int64_t> parseQuantityBytes(std::string_view text) {
  std::string_view rest = text;
  if (rest.empty()) {
    return malformed(text, "is empty");
  }
  if (rest.front() == '+') {
    rest.remove_prefix(1);
  } else if (rest.front() == '-') {
    return malformed(text, "is negative");
  }
  // Digits, optional fraction.
  Wide whole = 0;
  Wide fraction = 0;
  int fraction_digits = 0;
  std::size_t i = 0;
  bool saw_digit = false;
  constexpr Wide kCap = static_cast<Wide>(1) << 100;
  for (; i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])); ++i) {
    whole = whole * 10 + static_cast<unsigned>(rest[i] - '0');
    saw_digit = true;
    if (whole > kCap) {
      return malformed(text, "is too large");
    }
  }
  if (i < rest.size() && rest[i] == '.') {
    ++i;
    for (; i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])); ++i) {
      if (fraction_digits < 18) {
        fraction = fraction * 10 + static_cast<unsigned>(rest[i] - '0');
        ++fraction_digits;
      }
      saw_digit = true;
    }
  }
  if (!saw_digit) {
    return malformed(text, "has no digits");
  }
  std::string_view suffix_text = rest.substr(i);
  int base = 10;
  int exponent = 0;
  bool matched = false;
  for (const Suffix& suffix : kSuffixes) {
    if (suffix_text == suffix.text) {
      base = suffix.base;
      exponent = suffix.exponent;
      matched = true;
      break;
    }
  }
  if (!matched && suffix_text.size() > 1 && (suffix_text[0] == 'e' || suffix_text[0] == 'E')) {
    // Decimal exponent form: 1e9, 5E3 ("1Ei" matched the table above).
    std::string_view digits = suffix_text.substr(1);
    bool negative = false;
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty() || digits.size() > 3) {
      return malformed(text, "has a malformed exponent");
    }
    for (char c : digits) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        return malformed(text, "has a malformed exponent");
      }
      exponent = exponent * 10 + (c - '0');
    }
    exponent = negative ? -exponent : exponent;
    matched = true;
  }
  if (!matched) {
    return malformed(text, "has an unknown suffix \"" + std::string(suffix_text) + "\"");
  }

  // value = (whole + fraction / 10^fractionDigits) * multiplier, rounded up.
  Wide numerator = whole;
  Wide denominator = 1;
  for (int d = 0; d < fraction_digits; ++d) {
    numerator *= 10;
    denominator *= 10;
  }
  numerator += fraction;
  if (base == 2) {
    for (int e = 0; e < exponent; ++e) {
      numerator *= 1024;
      if (numerator > (kCap << 20)) {
        return malformed(text, "is larger than 2^63-1 bytes");
      }
    }
  } else if (exponent >= 0) {
    for (int e = 0; e < exponent; ++e) {
      numerator *= 10;
      if (numerator > (kCap << 20)) {
        return malformed(text, "is larger than 2^63-1 bytes");
      }
    }
  } else {
    for (int e = 0; e < -exponent; ++e) {
      denominator *= 10;
    }
  }
  Wide value = (numerator + denominator - 1) / denominator;
  if (value > static_cast<Wide>(std::numeric_limits<std::int64_t>::max())) {
    return malformed(text, "is larger than 2^63-1 bytes");
  }
  return static_cast<std::int64_t>(value);
}

std::string formatBinarySI(std::int64_t bytes) {
  static constexpr std::array<std::string_view, 7> kUnits{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (bytes == 0) {
    return "0";
  }
  std::int64_t value = bytes;
  std::size_t unit = 0;
  while (unit + 1 < kUnits.size() && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  return std::to_string(value) + std::string(kUnits[unit]);
}

std::string humanBytes(std::int64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    return std::to_string(bytes) + " B";
  }
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f %s", value, kUnits[unit]);
  return buffer;
}

}  // namespace kvc
