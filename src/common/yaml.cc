#include "kvc/common/yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "yaml_internal.h"

namespace kvc {
namespace {

bool isOneOf(std::string_view text, std::initializer_list<std::string_view> words) {
  for (std::string_view word : words) {
    if (text == word) {
      return true;
    }
  }
  return false;
}

bool isNullWord(std::string_view s) { return isOneOf(s, {"", "~", "null", "Null", "NULL"}); }

std::optional<bool> boolWord(std::string_view s) {
  if (isOneOf(s, {"true", "True", "TRUE", "yes", "Yes", "YES", "y", "Y", "on", "On", "ON"})) {
    return true;
  }
  if (isOneOf(s, {"false", "False", "FALSE", "no", "No", "NO", "n", "N", "off", "Off", "OFF"})) {
    return false;
  }
  return std::nullopt;
}

bool allDigits(std::string_view s, int base) {
  if (s.empty()) {
    return false;
  }
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    const bool ok = base == 16  ? std::isxdigit(u) != 0
                    : base == 8 ? (c >= '0' && c <= '7')
                                : std::isdigit(u) != 0;
    if (!ok) {
      return false;
    }
  }
  return true;
}

// Integer forms: [-+]?[0-9]+ (a leading 0 means octal), 0x…, 0o….
std::optional<Json> intValue(std::string_view s) {
  std::string_view digits = s;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  } else if (digits.size() > 2 && digits[0] == '0' && digits[1] == 'o') {
    base = 8;
    digits.remove_prefix(2);
  } else if (digits.size() > 1 && digits[0] == '0') {
    base = 8;
    digits.remove_prefix(1);
  }
  if (!allDigits(digits, base)) {
    return std::nullopt;
  }
  errno = 0;
  const std::string copy(digits);
  const unsigned long long magnitude = std::strtoull(copy.c_str(), nullptr, base);
  if (errno == ERANGE ||
      magnitude > static_cast<unsigned long long>(std::numeric_limits<long long>::max())) {
    return Json(std::strtod(std::string(s).c_str(), nullptr));
  }
  const auto value = static_cast<long long>(magnitude);
  return Json(negative ? -value : value);
}

std::optional<Json> floatValue(std::string_view s) {
  if (isOneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})) {
    return Json(std::numeric_limits<double>::infinity());
  }
  if (isOneOf(s, {"-.inf", "-.Inf", "-.INF"})) {
    return Json(-std::numeric_limits<double>::infinity());
  }
  if (isOneOf(s, {".nan", ".NaN", ".NAN"})) {
    return Json(std::numeric_limits<double>::quiet_NaN());
  }
  // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    ++i;
  }
  std::size_t mantissa_digits = 0;
  bool saw_dot = false;
  for (; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++mantissa_digits;
    } else if (s[i] == '.' && !saw_dot) {
      saw_dot = true;
    } else {
      break;
    }
  }
  if (mantissa_digits == 0) {
    return std::nullopt;
  }
  bool saw_exponent = false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
      ++i;
    }
    if (!allDigits(s.substr(i), 10)) {
      return std::nullopt;
    }
    saw_exponent = true;
    i = s.size();
  }
  if (i != s.size() || (!saw_dot && !saw_exponent)) {
    return std::nullopt;
  }
  return Json(std::strtod(std::string(s).c_str(), nullptr));
}

}  // namespace

Json resolvePlain(const std::string& s) {
  if (isNullWord(s)) {
    return Json(nullptr);
  }
  if (auto b = boolWord(s)) {
    return Json(*b);
  }
  if (auto i = intValue(s)) {
    return *i;
  }
  if (auto f = floatValue(s)) {
    return *f;
  }
  return Json(s);
}

namespace {

void emit(YAML::Emitter& out, const Json& value);

// Plain when the string reads back as itself; single-quoted when that needs no escapes (JSON
// values such as the client configuration stay readable); double-quoted otherwise.
void emitString(YAML::Emitter& out, const std::string& s) {
  if (!yamlNeedsQuoting(s)) {
    out << s;
    return;
  }
  const bool escapes = std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return c == '\'' || u < 0x20 || u == 0x7f;
  });
  out << (escapes ? YAML::DoubleQuoted : YAML::SingleQuoted) << s;
}

void emit(YAML::Emitter& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      out << YAML::Null;
      break;
    case Json::value_t::boolean:
      out << (value.get<bool>() ? "true" : "false");
      break;
    case Json::value_t::number_integer:
      out << value.get<long long>();
      break;
    case Json::value_t::number_unsigned:
      out << value.get<unsigned long long>();
      break;
    case Json::value_t::number_float: {
      const double d = value.get<double>();
      if (std::isnan(d)) {
        out << ".nan";
      } else if (std::isinf(d)) {
        out << (d > 0 ? ".inf" : "-.inf");
      } else {
        out << value.dump();
      }
      break;
    }
    case Json::value_t::string:
      emitString(out, value.get<std::string>());
      break;
    case Json::value_t::array:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        break;
      }
      out << YAML::BeginSeq;
      for (const auto& item : value) {
        emit(out, item);
      }
      out << YAML::EndSeq;
      break;
    case Json::value_t::object:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        break;
      }
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key;
        emitString(out, key);
        out << YAML::Value;
        emit(out, item);
      }
      out << YAML::EndMap;
      break;
    case Json::value_t::binary:
    case Json::value_t::discarded:
      out << YAML::Null;
      break;
  }
}

}  // namespace

bool yamlNeedsQuoting(std::string_view s) {
  if (s.empty()) {
    return true;
  }
  const std::string copy(s);
  if (!resolvePlain(copy).is_string()) {
    return true;  // would read back as null, a boolean or a number
  }
  const char first = s.front();
  if (std::string_view(",[]{}#&*!|>'\"%@`").find(first) != std::string_view::npos) {
    return true;
  }
  if ((first == '-' || first == '?' || first == ':') && (s.size() == 1 || s[1] == ' ')) {
    return true;
  }
  if (s.starts_with("---") || s.starts_with("...")) {
    return true;
  }
  if (s.front() == ' ' || s.back() == ' ' || s.back() == ':') {
    return true;
  }
  if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos) {
    return true;
  }
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return true;
    }
  }
  return false;
}

std::string toYaml(const Json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  emit(out, value);
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') {
    text += '\n';
  }
  return text;
}

}  // namespace kvc
