#pragma once
// The shape of a JSON text, measured without parsing it: how deep it nests, how many values it
// holds, and how much work nlohmann's ordered objects would spend on its keys. A body from a
// hostile caller is checked against limits before nlohmann builds it:
// - depth: nlohmann's parser and destructor are iterative, but copying, comparing, dumping and
//   diffing a value recurse once per level (the mutating webhook copies and diffs the Pod), so
//   100,000 nested `[` overflow a thread's stack;
// - values: a parsed value costs up to ~100 bytes (an empty string inside an array: the 16-byte
//   value, its heap std::string and the vector's growth), 24 times the 3 bytes `"",` it took on
//   the wire, so an 8 MiB body could parse to ~200 MiB;
// - key work: an ordered object finds a key by a linear search (the parser does so for every
//   member, to replace duplicates), so an object of n members costs n²/2 key comparisons: 80,000
//   members (800 KB) took 112 s of CPU on this machine.
// The scan is one pass over the bytes, with no allocation; it stops at the first limit passed.
// It does not validate the text (nlohmann does that next): a malformed text is measured as far
// as it can be.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kvc {

struct JsonShapeLimits {
  std::size_t max_depth = 0;  // nesting of [ and {; 0: not checked (nor the other two)
  // Containers, elements and members (each key and each value), counted as nlohmann stores them.
  std::size_t max_values = 0;
  // The bytes the parser compares to look up keys: for every key, the members before it in its
  // object times (its length + 32), the 32 standing for a comparison's own cost.
  std::size_t max_key_work = 0;
};

struct JsonShapeRefusal {
  std::string_view limit;  // "json_depth", "json_values" or "json_keys"
  std::string message;     // names the limit and its value, for the caller
};

// The first limit the text passes, or nullopt when it is within all of them.
std::optional<JsonShapeRefusal> checkJsonShape(std::string_view text,
                                               const JsonShapeLimits& limits);

}  // namespace kvc
