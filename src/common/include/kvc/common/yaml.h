#pragma once
// YAML <-> JSON for manifests: multi-document input with positions, and YAML output that reads
// back to the same JSON (strings that would resolve to another type are quoted).
//
// Plain scalars resolve as Kubernetes' YAML reader resolves them (YAML 1.1: `yes`/`on` are
// booleans, `0755` is octal), so a manifest means here what it means to kubectl.

#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc {

struct YamlDocument {
  Json value;
  int index = 0;  // 1-based position among the stream's documents
  int line = 0;   // 1-based line where the document starts
};

// Parses every document of a YAML (or JSON) stream; empty documents are skipped. A syntax error
// is InvalidArgument naming the line and column, and so is what the reader bounds: nesting past
// yaml-cpp's limit (~500 levels), aliases that expand past a million values, a scalar that is
// not UTF-8 (yaml_read.cc). A collection used as a mapping key becomes its JSON text.
Result<std::vector<YamlDocument>> parseYamlDocuments(std::string_view text);

// Emits one JSON value as a block-style YAML document (no leading "---", trailing newline). It
// reads back as the same value, but for a string holding a Unicode noncharacter (U+FFFE, U+FFFF,
// U+FDD0..U+FDEF, ...) next to a character that needs double quotes: yaml-cpp's double-quoted
// writer puts U+FFFD in the noncharacter's place (found by test/fuzz/fuzz_yaml).
std::string toYaml(const Json& value);

// True when `text` must be quoted in YAML to be read back as the same string.
bool yamlNeedsQuoting(std::string_view text);

}  // namespace kvc
