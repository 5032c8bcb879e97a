// The YAML reader and writer (common/yaml.h) on any text, as every manifest, cluster file,
// kubeconfig and policy file is read: refused with a message naming the line, or documents
// whose values are JSON every consumer can print (dump() refuses invalid UTF-8), and each, written
// back with toYaml, reads back as the same value — the header's promise (but for Unicode
// noncharacters, which the header says yaml-cpp does not write back).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kvc/common/yaml.h"

namespace {

using kvc::Json;

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

// JSON equality where NaN equals NaN (a YAML .nan reads back as NaN).
bool same(const Json& a, const Json& b) {
  if (a.is_number_float() && b.is_number_float() && std::isnan(a.get<double>()) &&
      std::isnan(b.get<double>())) {
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) {
      return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same(a[i], b[i])) {
        return false;
      }
    }
    return true;
  }
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) {
      return false;
    }
    for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y) {
      if (x.key() != y.key() || !same(x.value(), y.value())) {
        return false;
      }
    }
    return true;
  }
  return a == b;
}

// True when a string (or key) holds a Unicode noncharacter (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF).
// yaml-cpp's double-quoted writer replaces them with U+FFFD, and YAML cannot print them raw, so
// such a string does not come back from toYaml as it went in (yaml.h says so).
bool holdsNoncharacter(const Json& value) {
  if (value.is_array() || value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      if ((value.is_object() && holdsNoncharacter(Json(it.key()))) || holdsNoncharacter(*it)) {
        return true;
      }
    }
    return false;
  }
  if (!value.is_string()) {
    return false;
  }
  const std::string& s = value.get_ref<const std::string&>();
  for (std::size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const std::size_t n = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    std::uint32_t cp = n == 1 ? lead : lead & (0x7F >> n);
    for (std::size_t k = 1; k < n && i + k < s.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    if ((cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) {
      return true;
    }
    i += n;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto documents = kvc::parseYamlDocuments(text);
  if (!documents.ok()) {
    check(!documents.status().message().empty());
    return 0;
  }
  for (const kvc::YamlDocument& document : *documents) {
    check(document.index >= 1 && document.line >= 1);
    (void)document.value.dump();  // throws on a string that is not UTF-8
    const std::string yaml = kvc::toYaml(document.value);
    if (holdsNoncharacter(document.value)) {
      continue;
    }
    auto again = kvc::parseYamlDocuments(yaml);
    check(again.ok());
    if (document.value.is_null()) {
      check(again->empty());
      continue;
    }
    check(again->size() == 1 && same(again->front().value, document.value));
  }
  return 0;
}
