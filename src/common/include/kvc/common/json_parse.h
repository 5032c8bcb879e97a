#pragma once
// Parsing JSON that comes from outside the process — an AdmissionReview body, a Mooncake
// master's answer, a watch stream — with two bounds nlohmann's own DOM parser lacks.
//
// Depth. The parser itself is iterative, but copying, comparing, dumping and diffing a value
// recurse once per level: a body of 100,000 nested `[` (200 KB, well inside the webhook's 8 MiB)
// overflows an 8 MiB thread stack in the first copy and takes the whole process down. Kubernetes
// objects are typed and pruned to their schema and nest a few dozen levels at most, so
// kMaxJsonDepth leaves ample room and keeps every recursion within ~1.6 MiB of stack (ASan
// builds included). Deeper text is refused before anything recurses.
//
// Width. An ordered object finds a key by scanning its members, so inserting n keys through
// operator[] costs n²/2 comparisons: a 1 MB object of 100,000 short keys kept the parser busy
// for more than two minutes. JsonObjectBuilder indexes the keys beside the object, so a parse
// is linear in the text.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc {

// Levels of nested arrays and objects a parse accepts: `[]` is one level, `[[]]` two.
inline constexpr std::size_t kMaxJsonDepth = 1000;

// Parses one JSON document (RFC 8259, as Json::parse does: the same values, the same handling
// of a repeated key — first position, last value). InvalidArgument naming the byte offset for
// bad syntax, or naming kMaxJsonDepth for text nested deeper.
Result<Json> parseJson(std::string_view text);

// Appends members to an object in time linear in their number. A repeated key keeps the place
// of its first occurrence and takes the last value, as operator[] does.
class JsonObjectBuilder {
public:
  // `object` must be an object, and nothing else may add members while the builder is in use.
  explicit JsonObjectBuilder(Json& object);

  // The value slot of `key`: a new null member, or the existing member's value.
  Json& member(std::string key);

private:
  // Objects this small are scanned: an index would cost more than it saves.
  static constexpr std::size_t kScanned = 16;

  Json::object_t* object_;
  std::unordered_multimap<std::size_t, std::size_t> index_;  // key hash -> member position
};

}  // namespace kvc
