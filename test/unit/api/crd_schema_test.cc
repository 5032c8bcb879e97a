// The CRDs under deploy/crds (the source of truth for the schema, DESIGN.md §5) and the codecs in
// src/api agree on every field and every default (issue 23 §7).
//
// How, for each kind (KVCacheBackend, KVCachePool, KVCachePoolBinding, ModelDeployment):
//
// - An example object is built from the CRD's openAPIV3Schema: every property of spec and status
//   set, recursively, every list with one item, every map with one key, and each leaf a distinct
//   value the schema accepts — an enum's first value other than the default, an integer within
//   its bounds other than the default, a boolean other than the default, a quantity "<n>Gi", a
//   string matching the field's pattern and length bounds (the test checks each value against
//   the schema before using it). Cross-field CEL rules are not evaluated (the example sets both
//   connection.managed and connection.external, and a watermark's low may exceed its high): the
//   decoders do not judge them; the API server and the webhook do.
// - The example goes through the kind's codec: decoded with api::<kind>FromJson, then written
//   back — the status by the kind's own encoder (<kind>StatusToJson, what the operator writes),
//   the spec by a projection in this file. The operator reads specs and never writes them, so
//   there is no spec encoder; the projection writes each member of the typed spec under the JSON
//   name the decoder reads it from, and nothing else. It destructures every struct it writes
//   (`const auto& [a, b, ...] = spec;`), so a member added to a spec struct stops this file
//   compiling until the projection writes it. The status structs extend StatusHead and cannot be
//   destructured; a size tripwire (the *StatusMirror structs) does the same for them.
//
// The checks, each a test per kind:
//  1. EverySchemaFieldIsReadAndWrittenBack — every leaf of the example comes back at its path
//     with its value (quantities compared as bytes). A schema field the decoder ignores (or the
//     status encoder drops) fails, naming its path.
//  2. EveryFieldTheCodecsReadOrWriteIsInTheSchema — everything written back names a schema path,
//     with the schema's type, enum, bounds and pattern (the API server would prune an unknown
//     field, refuse a wrong type); every member of the typed value decoded from the example is
//     filled (a member left empty is one the decoder reads from a path the schema lacks, or not at
//     all; only spec.type and spec.kvCache.connector, whose one enum value is the default, cannot
//     be told apart); and what is written back decodes to the same thing again (the decoder reads
//     each member where it is written).
//  3. EverySchemaDefaultIsTheDecodersDefault — for each `default:` in the schema, the example
//     without that field (in every list item) decodes to the default as the API server applies
//     it (an object's default is defaulted in turn: spec.transport {} gives protocol Auto).
//  4. EveryValueTheSchemaAllowsIsReadAndWrittenBack — each enum value of each field, a quantity
//     written as an integer, null where the schema says nullable: the decoder takes it and it
//     comes back (a decoder enum missing a schema value would refuse objects the API server
//     stores).
//  5. TheCodecsFillNothingTheSchemaLeavesAbsent — the converse of 3: a skeleton (every object and
//     list present, only required scalars set), and the skeleton without each optional object or
//     list in turn, come back with nothing the API server would not have put there, except the
//     one-sided fields listed in kOneSided, each with its reason (an entry no longer needed
//     fails too).
// Also: every CRD under deploy/crds is one of these kinds, the Helm chart ships the very same
// CRDs, and the index functions (api/indexes.h) read schema paths with the schema's default.
//
// When it fails: a new CRD field wants its decoder line (and encoder line, for status) and, for
// spec, its line in the projection below; a new typed member wants its schema field. Fix the
// side that is wrong — the CRD is the contract.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/indexes.h"
#include "kvc/api/meta.h"
#include "kvc/api/model_deployment.h"
#include "kvc/api/pool.h"
#include "kvc/common/quantity.h"
#include "kvc/common/yaml.h"

#ifndef KVC_CRD_DIR
#error "KVC_CRD_DIR must name deploy/crds (test/unit/api/CMakeLists.txt)"
#endif
#ifndef KVC_HELM_CRD_DIR
#error "KVC_HELM_CRD_DIR must name the Helm chart's crds/ (test/unit/api/CMakeLists.txt)"
#endif

namespace kvc::api {
namespace {

namespace fs = std::filesystem;
using ::testing::IsEmpty;

// ---------------------------------------------------------------------------------------------
// Fields that are one-sided on purpose. Only check 5 consults this list: the C++ writes these
// where the object had nothing and the schema has no default. Each entry is the kind ("*": every
// kind), the field's schema path ("[]" for every list item) and why the difference is harmless.

struct OneSided {
  std::string_view kind;
  std::string_view path;
  std::string_view reason;
};

constexpr OneSided kOneSided[] = {
    {"KVCacheBackend", "spec.connection.managed.members[].transport.protocol",
     "a group without a transport block inherits the backend's (deploy/crds/README.md); the typed "
     "value spells that Auto, which means the same (offeredTransports)"},
    {"KVCacheBackend", "spec.connection.managed.members[].localDisks[].eviction.enabled",
     "a tier without an eviction block evicts (the store's default); the typed value says so "
     "rather than keeping the absence"},
    {"*", "status.conditions[].message",
     "the encoder always writes a condition's message, as metav1.Condition does (required, not "
     "omitempty there); an empty message and none mean the same"},
    {"KVCachePool", "status.domains[].binding.namespace",
     "the pool controller registers a domain only for a Binding, so it always knows its namespace, "
     "name, blockSize and dtype (required in the Binding's spec); PoolDomain keeps them as plain "
     "values and the encoder writes them as they are"},
    {"KVCachePool", "status.domains[].binding.name", "as for binding.namespace"},
    {"KVCachePool", "status.domains[].blockSize", "as for binding.namespace"},
    {"KVCachePool", "status.domains[].dtype", "as for binding.namespace"},
};

const OneSided* oneSided(std::string_view kind, std::string_view schema_path) {
  for (const OneSided& entry : kOneSided) {
    if ((entry.kind == kind || entry.kind == "*") && entry.path == schema_path) {
      return &entry;
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Reading the CRDs.

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Json parseSingleDocument(const fs::path& path) {
  const auto docs = parseYamlDocuments(readFile(path));
  EXPECT_TRUE(docs.ok()) << path << ": " << docs.status().message();
  if (!docs.ok() || docs->size() != 1) {
    ADD_FAILURE() << path << " must hold exactly one document";
    return Json::object();
  }
  return (*docs)[0].value;
}

// The openAPIV3Schema of the only version of the CRD in `file`, which must declare `kind`.
Json crdSchema(std::string_view file, std::string_view kind) {
  const Json crd = parseSingleDocument(fs::path(KVC_CRD_DIR) / file);
  EXPECT_EQ(stringAt(crd, {"spec", "names", "kind"}), kind) << file;
  const Json versions = crd["spec"].value("versions", Json::array());
  if (versions.size() != 1) {
    ADD_FAILURE() << file << " must serve exactly one version (this test reads the only one)";
    return Json::object();
  }
  EXPECT_EQ(versions[0].value("name", ""), kVersion) << file;
  return versions[0]["schema"]["openAPIV3Schema"];
}

// ---------------------------------------------------------------------------------------------
// The schema, walked.

bool isIntOrString(const Json& schema) { return schema.value("x-kubernetes-int-or-string", false); }

// "object", "array", "string", "integer", "boolean", "number", or "int-or-string".
std::string typeOf(const Json& schema) {
  return isIntOrString(schema) ? "int-or-string" : schema.value("type", "");
}

bool isContainer(const Json& schema) {
  const std::string type = typeOf(schema);
  return type == "object" || type == "array";
}

// The schema of `key` in an object schema: its property, else the map's value schema; nullptr
// when the schema has neither (the API server would prune the key).
const Json* childSchema(const Json& schema, const std::string& key) {
  if (auto properties = schema.find("properties"); properties != schema.end()) {
    if (auto child = properties->find(key); child != properties->end()) {
      return &*child;
    }
  }
  if (auto map = schema.find("additionalProperties"); map != schema.end() && map->is_object()) {
    return &*map;
  }
  return nullptr;
}

bool isRequired(const Json& object_schema, const std::string& key) {
  const Json required = object_schema.value("required", Json::array());
  return std::find(required.begin(), required.end(), key) != required.end();
}

// "spec.connection.managed.members[].fabricInterfaceCount"
std::string displayPath(const std::vector<std::string>& segments) {
  std::string out;
  for (const std::string& segment : segments) {
    if (segment == "[]") {
      out += segment;
    } else {
      out += (out.empty() ? "" : ".") + segment;
    }
  }
  return out;
}

// The schema path of an instance path: "members[0].image" -> "members[].image".
std::string schemaPathOf(const std::string& instance_path) {
  static const std::regex kIndex(R"(\[[0-9]+\])");
  return std::regex_replace(instance_path, kIndex, "[]");
}

bool isUnder(const std::string& path, const std::string& prefix) {
  return path == prefix || path.starts_with(prefix + ".") || path.starts_with(prefix + "[");
}

struct FieldAt {
  std::vector<std::string> segments;  // "[]" for every item of a list
  std::string path;                   // displayPath(segments)
  Json value;                         // the default, for SchemaFacts::defaults
};

// What the checks need to know about one kind's schema (spec and status).
struct SchemaFacts {
  std::vector<FieldAt> defaults;             // every `default:`
  std::vector<FieldAt> optional_containers;  // objects and lists their parent does not require
  std::set<std::string> quantities;          // x-kubernetes-int-or-string fields
  // Every other value a field may take: each enum value, a quantity as an integer, null where
  // nullable. `value` is the alternative.
  std::vector<FieldAt> alternatives;
};

void walkSchema(const Json& schema, std::vector<std::string>& segments, SchemaFacts& facts) {
  const std::string path = displayPath(segments);
  if (isIntOrString(schema)) {
    facts.quantities.insert(path);
    facts.alternatives.push_back({segments, path, std::int64_t{16} << 30});  // 16Gi, as bytes
  }
  for (const Json& value : schema.value("enum", Json::array())) {
    facts.alternatives.push_back({segments, path, value});
  }
  if (schema.value("nullable", false)) {
    facts.alternatives.push_back({segments, path, Json()});
  }
  if (auto properties = schema.find("properties"); properties != schema.end()) {
    for (const auto& [key, child] : properties->items()) {
      segments.push_back(key);
      if (child.contains("default")) {
        facts.defaults.push_back({segments, displayPath(segments), child["default"]});
      }
      if (isContainer(child) && !isRequired(schema, key)) {
        facts.optional_containers.push_back({segments, displayPath(segments), Json()});
      }
      walkSchema(child, segments, facts);
      segments.pop_back();
    }
  }
  if (auto items = schema.find("items"); items != schema.end()) {
    segments.push_back("[]");
    walkSchema(*items, segments, facts);
    segments.pop_back();
  }
}

// Why `value` is not a valid instance of the scalar `schema`, or "" when it is.
std::string scalarProblem(const Json& schema, const Json& value) {
  if (value.is_null()) {
    return schema.value("nullable", false) ? "" : "null, and the schema does not say nullable";
  }
  const std::string type = typeOf(schema);
  const bool type_ok = type == "int-or-string" ? value.is_string() || value.is_number_integer()
                       : type == "string"      ? value.is_string()
                       : type == "integer"     ? value.is_number_integer()
                       : type == "boolean"     ? value.is_boolean()
                       : type == "number"      ? value.is_number()
                                               : type.empty();
  if (!type_ok) {
    return value.dump() + " is a " + value.type_name() + "; the schema says " + type;
  }
  if (auto values = schema.find("enum"); values != schema.end()) {
    if (std::find(values->begin(), values->end(), value) == values->end()) {
      return value.dump() + " is not one of " + values->dump();
    }
  }
  if (value.is_number_integer()) {
    const std::int64_t number = value.get<std::int64_t>();
    if (schema.contains("minimum") && number < schema["minimum"].get<std::int64_t>()) {
      return value.dump() + " is below the minimum " + schema["minimum"].dump();
    }
    if (schema.contains("maximum") && number > schema["maximum"].get<std::int64_t>()) {
      return value.dump() + " is above the maximum " + schema["maximum"].dump();
    }
  }
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (schema.contains("minLength") && text.size() < schema["minLength"].get<std::size_t>()) {
      return value.dump() + " is shorter than minLength " + schema["minLength"].dump();
    }
    if (schema.contains("maxLength") && text.size() > schema["maxLength"].get<std::size_t>()) {
      return value.dump() + " is longer than maxLength " + schema["maxLength"].dump();
    }
    if (schema.contains("pattern")) {
      const std::regex pattern(schema["pattern"].get<std::string>());
      if (!std::regex_search(text, pattern)) {
        return value.dump() + " does not match " + schema["pattern"].get<std::string>();
      }
    }
    static const std::regex kDateTime(R"(^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})"
                                      R"((\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$)");
    if (schema.value("format", "") == "date-time" && !std::regex_search(text, kDateTime)) {
      return value.dump() + " is not an RFC 3339 date-time";
    }
  }
  return "";
}

// Every place where `value` (an instance at `path`) leaves `schema`: keys the schema lacks, and
// values of another type or outside the schema's enum, bounds or pattern.
void conform(const Json& schema, const Json& value, const std::string& path,
             std::vector<std::string>& problems) {
  const std::string type = typeOf(schema);
  if (type == "object") {
    if (!value.is_object()) {
      problems.push_back(path + " is a " + value.type_name() + "; the schema says object");
      return;
    }
    for (const auto& [key, child] : value.items()) {
      const Json* child_schema = childSchema(schema, key);
      if (child_schema == nullptr) {
        problems.push_back(path + "." + key +
                           " is not in the schema (the API server would prune it)");
        continue;
      }
      conform(*child_schema, child, path + "." + key, problems);
    }
    return;
  }
  if (type == "array") {
    if (!value.is_array()) {
      problems.push_back(path + " is a " + value.type_name() + "; the schema says array");
      return;
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
      conform(schema["items"], value[i], path + "[" + std::to_string(i) + "]", problems);
    }
    return;
  }
  if (const std::string problem = scalarProblem(schema, value); !problem.empty()) {
    problems.push_back(path + ": " + problem);
  }
}

// The API server's structural defaulting: a property with a default that the object lacks gets
// it, and defaulting goes on inside it and inside every present property and list item.
Json applyDefaults(const Json& schema, Json value) {
  if (value.is_object()) {
    if (auto properties = schema.find("properties"); properties != schema.end()) {
      for (const auto& [key, child] : properties->items()) {
        if (!value.contains(key) && child.contains("default")) {
          value[key] = child["default"];
        }
      }
    }
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (const Json* child = childSchema(schema, it.key()); child != nullptr) {
        it.value() = applyDefaults(*child, it.value());
      }
    }
  } else if (value.is_array() && schema.contains("items")) {
    for (Json& item : value) {
      item = applyDefaults(schema["items"], item);
    }
  }
  return value;
}

// Removes the field at `segments` ("[]": in every item of a list).
void removeAt(Json& value, const std::vector<std::string>& segments, std::size_t at = 0) {
  const std::string& segment = segments[at];
  if (segment == "[]") {
    if (value.is_array()) {
      for (Json& item : value) {
        removeAt(item, segments, at + 1);
      }
    }
    return;
  }
  if (!value.is_object() || !value.contains(segment)) {
    return;
  }
  if (at + 1 == segments.size()) {
    value.erase(segment);
  } else {
    removeAt(value[segment], segments, at + 1);
  }
}

// Sets the field at `segments` ("[]": in every item of a list) where its parent exists.
void setAt(Json& value, const std::vector<std::string>& segments, const Json& to,
           std::size_t at = 0) {
  const std::string& segment = segments[at];
  if (segment == "[]") {
    if (value.is_array()) {
      for (Json& item : value) {
        setAt(item, segments, to, at + 1);
      }
    }
    return;
  }
  if (!value.is_object()) {
    return;
  }
  if (at + 1 == segments.size()) {
    value[segment] = to;
  } else if (value.contains(segment)) {
    setAt(value[segment], segments, to, at + 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Examples drawn from the schema.

enum class Shape {
  Full,      // every property set
  Skeleton,  // every object and list present (one item); only required scalars set
};

class ExampleWriter {
public:
  explicit ExampleWriter(Shape shape) : shape_(shape) {}

  Json write(const Json& schema, const std::string& path) {
    const std::string type = typeOf(schema);
    if (type == "object") {
      Json out = Json::object();
      if (auto properties = schema.find("properties"); properties != schema.end()) {
        for (const auto& [key, child] : properties->items()) {
          if (shape_ == Shape::Full || isContainer(child) || isRequired(schema, key)) {
            out[key] = write(child, path + "." + key);
          }
        }
      } else if (auto map = schema.find("additionalProperties");
                 map != schema.end() && map->is_object() && shape_ == Shape::Full) {
        const std::string key = "kvc.test/k" + std::to_string(++next_);
        out[key] = write(*map, path + "[" + key + "]");
      }
      return out;
    }
    if (type == "array") {
      const Json& items = schema["items"];
      if (shape_ == Shape::Skeleton && !isContainer(items) && schema.value("minItems", 0) == 0) {
        return Json::array();
      }
      return Json::array({write(items, path + "[0]")});
    }
    return scalar(schema, path);
  }

  // Paths for which no value satisfies the schema (the test fails on any).
  const std::vector<std::string>& problems() const { return problems_; }

private:
  Json scalar(const Json& schema, const std::string& path) {
    const int n = ++next_;
    const Json none;
    const Json& schema_default = schema.contains("default") ? schema["default"] : none;
    auto fits = [&](const Json& value) {
      return value != schema_default && scalarProblem(schema, value).empty();
    };
    const std::string type = typeOf(schema);
    if (type == "boolean") {
      return schema_default.is_boolean() ? Json(!schema_default.get<bool>()) : Json(true);
    }
    if (type == "integer") {
      const std::int64_t low = schema.value("minimum", std::int64_t{1});
      const std::int64_t high = schema.value("maximum", low + 999);
      const std::int64_t span = high - low + 1;
      for (std::int64_t k = 0; k < std::min<std::int64_t>(span, 1000); ++k) {
        const Json value = low + (n + k) % span;
        if (fits(value)) {
          return value;
        }
      }
    }
    if (type == "number" && fits(Json(0.5))) {
      return 0.5;
    }
    if (type == "int-or-string" && fits(Json(std::to_string(n) + "Gi"))) {
      return std::to_string(n) + "Gi";
    }
    if (type == "string") {
      if (auto values = schema.find("enum"); values != schema.end()) {
        for (const Json& value : *values) {
          if (value != "" && fits(value)) {
            return value;
          }
        }
        if (values->size() == 1) {
          return (*values)[0];  // the only value is the default (type: Mooncake)
        }
      }
      const std::string digits = std::to_string(n);
      std::vector<std::string> candidates{
          "v" + digits, "/v" + digits, "-flag" + digits + "=v" + digits,
          "h" + digits + ":" + std::to_string(1000 + n), "0." + std::to_string(n % 10000)};
      if (schema.value("format", "") == "date-time") {
        candidates = {"2024-05-06T07:08:" + std::to_string(10 + n % 50) + "Z"};
      }
      for (const std::string& candidate : candidates) {
        if (fits(Json(candidate))) {
          return candidate;
        }
      }
    }
    problems_.push_back(path + ": no example value satisfies " + schema.dump());
    return Json();
  }

  Shape shape_;
  int next_ = 0;
  std::vector<std::string> problems_;
};

// ---------------------------------------------------------------------------------------------
// Leaves: every scalar of spec and status by instance path ("spec.roles[0].ports[0].port").
// Empty objects and lists have no leaves, so {} and an absent object compare equal; null (where
// the schema says nullable) is no leaf either, as the decoders read it as absent.

using Leaves = std::map<std::string, Json>;

void flatten(const Json& value, const std::string& path, Leaves& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      flatten(child, path + "." + key, out);
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      flatten(value[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else if (!value.is_null()) {
    out[path] = value;
  }
}

Leaves leavesOf(const Json& object) {
  Leaves out;
  for (const char* part : {"spec", "status"}) {
    if (object.contains(part)) {
      flatten(object[part], part, out);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Typed values written back. Gaps collects the members a decode left empty.

class Gaps {
public:
  void need(bool filled, std::string_view member) {
    if (!filled) {
      members_.emplace_back(member);
    }
  }
  const std::vector<std::string>& members() const { return members_; }

private:
  std::vector<std::string> members_;
};

template <typename T>
void putOptional(Json& out, const char* key, const std::optional<T>& value, Gaps& gaps,
                 std::string_view member) {
  gaps.need(value.has_value(), member);
  if (value) {
    out[key] = *value;
  }
}

// A string member: "" is how the decoders keep an absent one (value_or("")).
void putString(Json& out, const char* key, const std::string& value, Gaps& gaps,
               std::string_view member) {
  gaps.need(!value.empty(), member);
  if (!value.empty()) {
    out[key] = value;
  }
}

void putStrings(Json& out, const char* key, const std::vector<std::string>& values, Gaps& gaps,
                std::string_view member) {
  gaps.need(!values.empty(), member);
  if (!values.empty()) {
    out[key] = values;
  }
}

// A member kept as the JSON the user wrote (copied into a Pod or DaemonSet as it is).
void putJson(Json& out, const char* key, const Json& value, Gaps& gaps, std::string_view member) {
  const bool filled = !value.is_null() && !value.empty();
  gaps.need(filled, member);
  if (filled) {
    out[key] = value;
  }
}

Json namesList(const std::vector<std::string>& names) {
  Json out = Json::array();
  for (const std::string& name : names) {
    out.push_back({{"name", name}});
  }
  return out;
}

// What one kind's codec gives back for an object.
struct Through {
  Json written;  // {"spec": the projection of the typed spec, "status": the status encoder's}
  Gaps gaps;     // typed members the decode left empty
};

// --- StatusHead and its parts, shared by every kind.

void conditionGaps(const Condition& condition, Gaps& gaps) {
  const auto& [type, status, reason, message, last_transition_time, observed_generation] =
      condition;
  gaps.need(!type.empty(), "Condition::type");
  gaps.need(status != kConditionUnknown, "Condition::status");  // Unknown: the decoder's fallback
  gaps.need(!reason.empty(), "Condition::reason");
  gaps.need(!message.empty(), "Condition::message");
  gaps.need(!last_transition_time.empty(), "Condition::last_transition_time");
  gaps.need(observed_generation != 0, "Condition::observed_generation");
}

void statusHeadGaps(const StatusHead& head, Gaps& gaps) {
  const auto& [observed_generation, phase, phase_message, conditions] = head;
  gaps.need(observed_generation != 0, "StatusHead::observed_generation");
  gaps.need(!phase.empty(), "StatusHead::phase");
  gaps.need(!phase_message.empty(), "StatusHead::phase_message");
  gaps.need(!conditions.empty(), "StatusHead::conditions");
  for (const Condition& condition : conditions) {
    conditionGaps(condition, gaps);
  }
}

void referenceGaps(const std::vector<ObjectReference>& references, std::string_view member,
                   Gaps& gaps) {
  gaps.need(!references.empty(), member);
  for (const ObjectReference& reference : references) {
    const auto& [kind, namespace_name, name] = reference;
    gaps.need(!kind.empty(), "ObjectReference::kind");
    gaps.need(!namespace_name.empty(), "ObjectReference::namespace_name");
    gaps.need(!name.empty(), "ObjectReference::name");
  }
}

Json endpointsSpec(const std::vector<Endpoint>& endpoints, Gaps& gaps) {
  Json out = Json::array();
  for (const Endpoint& endpoint : endpoints) {
    const auto& [name, address] = endpoint;
    Json item = Json::object();
    putString(item, "name", name, gaps, "Endpoint::name");
    putString(item, "address", address, gaps, "Endpoint::address");
    out.push_back(std::move(item));
  }
  return out;
}

// Tripwires for the status structs, which extend StatusHead and so cannot be destructured: a
// member added to one changes its size and stops this file compiling until the *StatusGaps
// function below checks it and the mirror lists it.
struct BackendStatusMirror : StatusHead {
  std::vector<Endpoint> endpoints;
  std::optional<std::int64_t> capacity_total;
  std::optional<std::int64_t> capacity_used;
  std::vector<BackendMember> members;
  std::vector<ObjectReference> used_by;
};
static_assert(sizeof(BackendStatusMirror) == sizeof(KVCacheBackend::Status),
              "KVCacheBackend::Status changed: update backendStatusGaps and the mirror");
struct PoolStatusMirror : StatusHead {
  std::string client_endpoint;
  std::optional<std::int64_t> usage_total;
  std::vector<PoolDomain> domains;
  std::vector<ObjectReference> used_by;
};
static_assert(sizeof(PoolStatusMirror) == sizeof(KVCachePool::Status),
              "KVCachePool::Status changed: update poolStatusGaps and the mirror");
struct BindingStatusMirror : StatusHead {
  std::optional<std::int64_t> requested_quota;
  std::optional<std::int64_t> effective_quota;
  std::optional<std::int64_t> usage;
  std::optional<bool> over_quota;
  std::optional<std::int64_t> blocks;
  std::optional<std::string> hit_rate;
  std::vector<ObjectReference> used_by;
};
static_assert(sizeof(BindingStatusMirror) == sizeof(KVCachePoolBinding::Status),
              "KVCachePoolBinding::Status changed: update bindingStatusGaps and the mirror");
struct ModelDeploymentStatusMirror : StatusHead {
  std::string endpoint;
  std::optional<KVCacheAttachmentStatus> kv_cache;
  std::vector<ModelDeploymentRoleStatus> roles;
};
static_assert(sizeof(ModelDeploymentStatusMirror) == sizeof(ModelDeployment::Status),
              "ModelDeployment::Status changed: update modelDeploymentStatusGaps and the mirror");

// --- KVCacheBackend: the spec projection.

Json localDiskSpec(const LocalDisk& disk, Gaps& gaps) {
  const auto& [path, capacity_bytes, key_limit, eviction_enabled, eviction_policy, watermark_high,
               watermark_low, clean_after_delete] = disk;
  Json out = Json::object();
  putString(out, "path", path, gaps, "LocalDisk::path");
  gaps.need(capacity_bytes.has_value(), "LocalDisk::capacity_bytes");
  if (capacity_bytes) {
    out["capacity"] = formatBinarySI(*capacity_bytes);
  }
  putOptional(out, "keyLimit", key_limit, gaps, "LocalDisk::key_limit");
  Json eviction = {{"enabled", eviction_enabled}};
  gaps.need(eviction_enabled != LocalDisk{}.eviction_enabled, "LocalDisk::eviction_enabled");
  putOptional(eviction, "policy", eviction_policy, gaps, "LocalDisk::eviction_policy");
  Json watermark = Json::object();
  putOptional(watermark, "high", watermark_high, gaps, "LocalDisk::watermark_high");
  putOptional(watermark, "low", watermark_low, gaps, "LocalDisk::watermark_low");
  if (!watermark.empty()) {
    eviction["watermark"] = std::move(watermark);
  }
  out["eviction"] = std::move(eviction);
  out["cleanAfterDelete"] = clean_after_delete;
  gaps.need(clean_after_delete != LocalDisk{}.clean_after_delete, "LocalDisk::clean_after_delete");
  return out;
}

Json memberGroupSpec(const MemberGroup& group, Gaps& gaps) {
  const auto& [medium, transport_protocol, capacity_per_member, node_selector, local_buffer_size,
               image, fabric_interface_count, extra_args, extra_env, runtime_class_name, host_paths,
               security_context, local_disk] = group;
  Json out = Json::object();
  putJson(out, "nodeSelector", node_selector, gaps, "MemberGroup::node_selector");
  putString(out, "medium", medium, gaps, "MemberGroup::medium");
  putString(out, "capacityPerMember", capacity_per_member, gaps,
            "MemberGroup::capacity_per_member");
  putOptional(out, "localBufferSize", local_buffer_size, gaps, "MemberGroup::local_buffer_size");
  putOptional(out, "image", image, gaps, "MemberGroup::image");
  out["transport"] = {{"protocol", transport_protocol}};
  gaps.need(transport_protocol != MemberGroup{}.transport_protocol && transport_protocol != "Auto",
            "MemberGroup::transport_protocol");
  out["fabricInterfaceCount"] = fabric_interface_count;
  gaps.need(fabric_interface_count != MemberGroup{}.fabric_interface_count,
            "MemberGroup::fabric_interface_count");
  putStrings(out, "extraArgs", extra_args, gaps, "MemberGroup::extra_args");
  putJson(out, "extraEnv", extra_env, gaps, "MemberGroup::extra_env");
  putOptional(out, "runtimeClassName", runtime_class_name, gaps, "MemberGroup::runtime_class_name");
  putJson(out, "hostPaths", host_paths, gaps, "MemberGroup::host_paths");
  putJson(out, "securityContext", security_context, gaps, "MemberGroup::security_context");
  gaps.need(local_disk.has_value(), "MemberGroup::local_disk");
  if (local_disk) {
    out["localDisks"] = Json::array({localDiskSpec(*local_disk, gaps)});
  }
  return out;
}

// leader, which also carries multiTenancy (a member of the Spec, not of LeaderSpec).
Json leaderSpec(const LeaderSpec& leader, bool multi_tenancy, Gaps& gaps) {
  const auto& [replicas, election_backend, member_addressing, allocation_strategy, extra_args,
               extra_env] = leader;
  const LeaderSpec cpp_default;
  Json out = {{"replicas", replicas},
              {"electionBackend", election_backend},
              {"memberAddressing", member_addressing},
              {"allocationStrategy", allocation_strategy},
              {"multiTenancy", multi_tenancy}};
  gaps.need(replicas != cpp_default.replicas, "LeaderSpec::replicas");
  gaps.need(election_backend != cpp_default.election_backend, "LeaderSpec::election_backend");
  gaps.need(member_addressing != cpp_default.member_addressing, "LeaderSpec::member_addressing");
  gaps.need(allocation_strategy != cpp_default.allocation_strategy,
            "LeaderSpec::allocation_strategy");
  gaps.need(multi_tenancy != KVCacheBackend::Spec{}.multi_tenancy, "Spec::multi_tenancy");
  putStrings(out, "extraArgs", extra_args, gaps, "LeaderSpec::extra_args");
  putJson(out, "extraEnv", extra_env, gaps, "LeaderSpec::extra_env");
  return out;
}

Json backendSpec(const KVCacheBackend::Spec& spec, Gaps& gaps) {
  const auto& [type, image, image_pull_policy, image_pull_secrets, transport_protocol, managed,
               external, multi_tenancy, leader, members, scale_in_grace_period_seconds,
               external_endpoints] = spec;
  Json out = Json::object();
  out["type"] = type;  // one enum value, which is also the default: nothing to tell apart
  putOptional(out, "image", image, gaps, "Spec::image");
  putOptional(out, "imagePullPolicy", image_pull_policy, gaps, "Spec::image_pull_policy");
  gaps.need(!image_pull_secrets.empty(), "Spec::image_pull_secrets");
  if (!image_pull_secrets.empty()) {
    out["imagePullSecrets"] = namesList(image_pull_secrets);
  }
  Json connection = Json::object();
  gaps.need(managed, "Spec::managed");
  if (managed) {
    Json managed_out = {{"leader", leaderSpec(leader, multi_tenancy, gaps)}};
    Json groups = Json::array();
    for (const MemberGroup& group : members) {
      groups.push_back(memberGroupSpec(group, gaps));
    }
    gaps.need(!members.empty(), "Spec::members");
    managed_out["members"] = std::move(groups);
    gaps.need(scale_in_grace_period_seconds.has_value(), "Spec::scale_in_grace_period_seconds");
    if (scale_in_grace_period_seconds) {
      managed_out["scaleIn"] = {{"gracePeriodSeconds", *scale_in_grace_period_seconds}};
    }
    connection["managed"] = std::move(managed_out);
  }
  gaps.need(external, "Spec::external");
  if (external) {
    gaps.need(!external_endpoints.empty(), "Spec::external_endpoints");
    connection["external"] = {{"endpoints", endpointsSpec(external_endpoints, gaps)}};
  }
  out["connection"] = std::move(connection);
  out["transport"] = {{"protocol", transport_protocol}};
  gaps.need(transport_protocol != KVCacheBackend::Spec{}.transport_protocol,
            "Spec::transport_protocol");
  return out;
}

void backendStatusGaps(const KVCacheBackend::Status& status, Gaps& gaps) {
  statusHeadGaps(status, gaps);
  gaps.need(!status.endpoints.empty(), "Status::endpoints");
  endpointsSpec(status.endpoints, gaps);
  gaps.need(status.capacity_total.has_value(), "Status::capacity_total");
  gaps.need(status.capacity_used.has_value(), "Status::capacity_used");
  gaps.need(!status.members.empty(), "Status::members");
  for (const BackendMember& member : status.members) {
    const auto& [segment_id, client_id, segment_name, node_name, medium, protocol, state] = member;
    for (const auto& [value, name] : {std::pair{&segment_id, "BackendMember::segment_id"},
                                      std::pair{&client_id, "BackendMember::client_id"},
                                      std::pair{&segment_name, "BackendMember::segment_name"},
                                      std::pair{&node_name, "BackendMember::node_name"},
                                      std::pair{&medium, "BackendMember::medium"},
                                      std::pair{&protocol, "BackendMember::protocol"},
                                      std::pair{&state, "BackendMember::state"}}) {
      gaps.need(!value->empty(), name);
    }
  }
  referenceGaps(status.used_by, "Status::used_by", gaps);
}

Result<Through> backendThrough(const Json& object) {
  KVC_ASSIGN_OR_RETURN(KVCacheBackend backend, backendFromJson(object));
  Through out;
  out.written = {{"spec", backendSpec(backend.spec, out.gaps)},
                 {"status", backendStatusToJson(backend.status)}};
  backendStatusGaps(backend.status, out.gaps);
  return out;
}

// --- KVCachePool.

Json poolSpec(const KVCachePool::Spec& spec, Gaps& gaps) {
  const auto& [backends, quota_total] = spec;
  Json out = Json::object();
  putStrings(out, "backends", backends, gaps, "Spec::backends");
  Json quota = Json::object();
  putString(quota, "total", quota_total, gaps, "Spec::quota_total");
  out["quota"] = std::move(quota);
  return out;
}

void poolStatusGaps(const KVCachePool::Status& status, Gaps& gaps) {
  statusHeadGaps(status, gaps);
  gaps.need(!status.client_endpoint.empty(), "Status::client_endpoint");
  gaps.need(status.usage_total.has_value(), "Status::usage_total");
  gaps.need(!status.domains.empty(), "Status::domains");
  for (const PoolDomain& domain : status.domains) {
    const auto& [name, binding_namespace, binding_name, block_size, dtype, blocks, hit_rate] =
        domain;
    gaps.need(!name.empty(), "PoolDomain::name");
    gaps.need(!binding_namespace.empty(), "PoolDomain::binding_namespace");
    gaps.need(!binding_name.empty(), "PoolDomain::binding_name");
    gaps.need(block_size != 0, "PoolDomain::block_size");
    gaps.need(!dtype.empty(), "PoolDomain::dtype");
    gaps.need(blocks.has_value(), "PoolDomain::blocks");
    gaps.need(hit_rate.has_value(), "PoolDomain::hit_rate");
  }
  referenceGaps(status.used_by, "Status::used_by", gaps);
}

Result<Through> poolThrough(const Json& object) {
  KVC_ASSIGN_OR_RETURN(KVCachePool pool, poolFromJson(object));
  Through out;
  out.written = {{"spec", poolSpec(pool.spec, out.gaps)},
                 {"status", poolStatusToJson(pool.status)}};
  poolStatusGaps(pool.status, out.gaps);
  return out;
}

// --- KVCachePoolBinding.

Json bindingSpec(const KVCachePoolBinding::Spec& spec, Gaps& gaps) {
  const auto& [pool_ref, quota_ceiling, domain] = spec;
  const auto& [name, block_size, dtype] = domain;
  Json out = Json::object();
  Json pool = Json::object();
  putString(pool, "name", pool_ref, gaps, "Spec::pool_ref");
  out["poolRef"] = std::move(pool);
  Json quota = Json::object();
  putString(quota, "ceiling", quota_ceiling, gaps, "Spec::quota_ceiling");
  out["quota"] = std::move(quota);
  Json domain_out = {{"name", name}};
  gaps.need(name != ReuseDomain{}.name, "ReuseDomain::name");
  gaps.need(block_size != 0, "ReuseDomain::block_size");
  if (block_size != 0) {  // 0 is below the schema's minimum: the decoder's "absent"
    domain_out["blockSize"] = block_size;
  }
  putString(domain_out, "dtype", dtype, gaps, "ReuseDomain::dtype");
  out["domain"] = std::move(domain_out);
  return out;
}

void bindingStatusGaps(const KVCachePoolBinding::Status& status, Gaps& gaps) {
  statusHeadGaps(status, gaps);
  gaps.need(status.requested_quota.has_value(), "Status::requested_quota");
  gaps.need(status.effective_quota.has_value(), "Status::effective_quota");
  gaps.need(status.usage.has_value(), "Status::usage");
  gaps.need(status.over_quota.has_value(), "Status::over_quota");
  gaps.need(status.blocks.has_value(), "Status::blocks");
  gaps.need(status.hit_rate.has_value(), "Status::hit_rate");
  referenceGaps(status.used_by, "Status::used_by", gaps);
}

Result<Through> bindingThrough(const Json& object) {
  KVC_ASSIGN_OR_RETURN(KVCachePoolBinding binding, bindingFromJson(object));
  Through out;
  out.written = {{"spec", bindingSpec(binding.spec, out.gaps)},
                 {"status", bindingStatusToJson(binding.status)}};
  bindingStatusGaps(binding.status, out.gaps);
  return out;
}

// --- ModelDeployment.

Json volumeSpec(const RoleVolume& volume, Gaps& gaps) {
  const auto& [mount_path, read_only, sub_path, config_map, secret, host_path] = volume;
  Json out = Json::object();
  putString(out, "mountPath", mount_path, gaps, "RoleVolume::mount_path");
  putOptional(out, "readOnly", read_only, gaps, "RoleVolume::read_only");
  putOptional(out, "subPath", sub_path, gaps, "RoleVolume::sub_path");
  for (const auto& [key, source, member] :
       {std::tuple{"configMap", &config_map, "RoleVolume::config_map"},
        std::tuple{"secret", &secret, "RoleVolume::secret"}}) {
    gaps.need(source->has_value(), member);
    if (*source) {
      Json named = Json::object();
      putString(named, "name", **source, gaps, member);
      out[key] = std::move(named);
    }
  }
  gaps.need(host_path.has_value(), "RoleVolume::host_path");
  if (host_path) {
    const auto& [path, type] = *host_path;
    Json host = Json::object();
    putString(host, "path", path, gaps, "RoleHostPath::path");
    putOptional(host, "type", type, gaps, "RoleHostPath::type");
    out["hostPath"] = std::move(host);
  }
  return out;
}

Json roleSpec(const ModelDeploymentRole& role, Gaps& gaps) {
  const auto& [name, kind, replicas, size, instance_type, resources, command, extra_args, env,
               image, image_pull_policy, image_pull_secrets, privileged, ports, additional_volumes,
               termination_grace_period_seconds] = role;
  const ModelDeploymentRole cpp_default;
  Json out = Json::object();
  putString(out, "name", name, gaps, "ModelDeploymentRole::name");
  out["kind"] = kind;
  out["replicas"] = replicas;
  out["size"] = size;
  gaps.need(kind != cpp_default.kind, "ModelDeploymentRole::kind");
  gaps.need(replicas != cpp_default.replicas, "ModelDeploymentRole::replicas");
  gaps.need(size != cpp_default.size, "ModelDeploymentRole::size");
  putOptional(out, "instanceType", instance_type, gaps, "ModelDeploymentRole::instance_type");
  const auto& [accelerator, interface_count] = resources;
  Json resources_out = Json::object();
  putOptional(resources_out, "accelerator", accelerator, gaps, "RoleResources::accelerator");
  putOptional(resources_out, "interface", interface_count, gaps, "RoleResources::interface_count");
  out["resources"] = std::move(resources_out);
  putOptional(out, "image", image, gaps, "ModelDeploymentRole::image");
  putOptional(out, "imagePullPolicy", image_pull_policy, gaps,
              "ModelDeploymentRole::image_pull_policy");
  gaps.need(!image_pull_secrets.empty(), "ModelDeploymentRole::image_pull_secrets");
  if (!image_pull_secrets.empty()) {
    out["imagePullSecrets"] = namesList(image_pull_secrets);
  }
  putOptional(out, "privileged", privileged, gaps, "ModelDeploymentRole::privileged");
  gaps.need(!ports.empty(), "ModelDeploymentRole::ports");
  if (!ports.empty()) {
    Json list = Json::array();
    for (const RolePort& port : ports) {
      const auto& [number, protocol] = port;
      gaps.need(number != 0, "RolePort::port");
      gaps.need(protocol != RolePort{}.protocol, "RolePort::protocol");
      list.push_back({{"port", number}, {"protocol", protocol}});
    }
    out["ports"] = std::move(list);
  }
  gaps.need(!additional_volumes.empty(), "ModelDeploymentRole::additional_volumes");
  if (!additional_volumes.empty()) {
    Json list = Json::array();
    for (const RoleVolume& volume : additional_volumes) {
      list.push_back(volumeSpec(volume, gaps));
    }
    out["additionalVolumes"] = std::move(list);
  }
  putOptional(out, "terminationGracePeriodSeconds", termination_grace_period_seconds, gaps,
              "ModelDeploymentRole::termination_grace_period_seconds");
  gaps.need(command.has_value() && !command->empty(), "ModelDeploymentRole::command");
  if (command) {
    out["command"] = *command;  // present, even empty, means take-over
  }
  putStrings(out, "extraArgs", extra_args, gaps, "ModelDeploymentRole::extra_args");
  gaps.need(!env.empty(), "ModelDeploymentRole::env");
  if (!env.empty()) {
    Json list = Json::array();
    for (const RoleEnvVar& variable : env) {
      const auto& [variable_name, value] = variable;
      Json item = Json::object();
      putString(item, "name", variable_name, gaps, "RoleEnvVar::name");
      putString(item, "value", value, gaps, "RoleEnvVar::value");
      list.push_back(std::move(item));
    }
    out["env"] = std::move(list);
  }
  return out;
}

Json modelDeploymentSpec(const ModelDeployment::Spec& spec, Gaps& gaps) {
  const auto& [model_name, engine, kv_cache, kv_transfer_protocol, roles, router] = spec;
  Json out = Json::object();
  Json model = Json::object();
  putString(model, "name", model_name, gaps, "Spec::model_name");
  out["model"] = std::move(model);
  const auto& [engine_name, version, image] = engine;
  Json engine_out = Json::object();
  putString(engine_out, "name", engine_name, gaps, "ModelEngine::name");
  putOptional(engine_out, "version", version, gaps, "ModelEngine::version");
  putOptional(engine_out, "image", image, gaps, "ModelEngine::image");
  out["engine"] = std::move(engine_out);
  gaps.need(kv_cache.has_value(), "Spec::kv_cache");
  if (kv_cache) {
    const auto& [pool_ref, connector] = *kv_cache;
    Json pool = Json::object();
    putString(pool, "name", pool_ref, gaps, "KVCacheAttachment::pool_ref");
    // connector: one enum value, which is also the default: nothing to tell apart.
    out["kvCache"] = {{"poolRef", std::move(pool)}, {"connector", connector}};
  }
  gaps.need(!roles.empty(), "Spec::roles");
  Json role_list = Json::array();
  for (const ModelDeploymentRole& role : roles) {
    role_list.push_back(roleSpec(role, gaps));
  }
  out["roles"] = std::move(role_list);
  gaps.need(router.has_value(), "Spec::router");
  if (router) {
    const auto& [replicas, extra_args] = *router;
    Json router_out = Json::object();
    putOptional(router_out, "replicas", replicas, gaps, "ModelRouter::replicas");
    putStrings(router_out, "extraArgs", extra_args, gaps, "ModelRouter::extra_args");
    out["router"] = std::move(router_out);
  }
  Json transfer = Json::object();
  putOptional(transfer, "protocol", kv_transfer_protocol, gaps, "Spec::kv_transfer_protocol");
  out["kvTransfer"] = std::move(transfer);
  return out;
}

void modelDeploymentStatusGaps(const ModelDeployment::Status& status, Gaps& gaps) {
  statusHeadGaps(status, gaps);
  gaps.need(!status.endpoint.empty(), "Status::endpoint");
  gaps.need(status.kv_cache.has_value(), "Status::kv_cache");
  if (status.kv_cache) {
    const auto& [binding, pool, domain] = *status.kv_cache;
    gaps.need(!binding.empty(), "KVCacheAttachmentStatus::binding");
    gaps.need(!pool.empty(), "KVCacheAttachmentStatus::pool");
    gaps.need(domain.has_value(), "KVCacheAttachmentStatus::domain");
    if (domain) {
      const auto& [name, block_size, dtype] = *domain;
      gaps.need(!name.empty(), "AttachedDomain::name");
      gaps.need(block_size.has_value(), "AttachedDomain::block_size");
      gaps.need(!dtype.empty(), "AttachedDomain::dtype");
    }
  }
  gaps.need(!status.roles.empty(), "Status::roles");
  for (const ModelDeploymentRoleStatus& role : status.roles) {
    const auto& [name, kind, replicas, ready_replicas, updated_replicas, unmanaged] = role;
    gaps.need(!name.empty(), "ModelDeploymentRoleStatus::name");
    gaps.need(!kind.empty(), "ModelDeploymentRoleStatus::kind");
    gaps.need(replicas.has_value(), "ModelDeploymentRoleStatus::replicas");
    gaps.need(ready_replicas.has_value(), "ModelDeploymentRoleStatus::ready_replicas");
    gaps.need(updated_replicas.has_value(), "ModelDeploymentRoleStatus::updated_replicas");
    gaps.need(unmanaged.has_value(), "ModelDeploymentRoleStatus::unmanaged");
  }
}

Result<Through> modelDeploymentThrough(const Json& object) {
  KVC_ASSIGN_OR_RETURN(ModelDeployment deployment, modelDeploymentFromJson(object));
  Through out;
  out.written = {{"spec", modelDeploymentSpec(deployment.spec, out.gaps)},
                 {"status", modelDeploymentStatusToJson(deployment.status)}};
  modelDeploymentStatusGaps(deployment.status, out.gaps);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The kinds.

struct KindCase {
  std::string_view kind;
  std::string_view file;  // in deploy/crds
  Result<Through> (*through)(const Json& object);
};

// GoogleTest prints the parameter of a failing test with this.
void PrintTo(const KindCase& kind, std::ostream* out) { *out << kind.kind; }

constexpr KindCase kKinds[] = {
    {kKindBackend, "worker.gpustack.ai_kvcachebackends.yaml", &backendThrough},
    {kKindPool, "worker.gpustack.ai_kvcachepools.yaml", &poolThrough},
    {kKindBinding, "worker.gpustack.ai_kvcachepoolbindings.yaml", &bindingThrough},
    {kKindModelDeployment, "worker.gpustack.ai_modeldeployments.yaml", &modelDeploymentThrough},
};

// The same value, quantities compared by the bytes they mean ("1Gi" and 1073741824).
bool sameValue(const Json& expected, const Json& actual, bool quantity) {
  if (expected == actual) {
    return true;
  }
  if (!quantity) {
    return false;
  }
  auto text = [](const Json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
  };
  const auto expected_bytes = parseQuantityBytes(text(expected));
  const auto actual_bytes = parseQuantityBytes(text(actual));
  return expected_bytes.ok() && actual_bytes.ok() && *expected_bytes == *actual_bytes;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    out += "\n  " + line;
  }
  return out;
}

// Where `actual` differs from `expected` under the schema path `prefix` ("" for everywhere).
std::vector<std::string> differencesUnder(const Leaves& expected, const Leaves& actual,
                                          const std::string& prefix,
                                          const std::set<std::string>& quantities) {
  std::vector<std::string> out;
  auto under = [&](const std::string& path) {
    return prefix.empty() || isUnder(schemaPathOf(path), prefix);
  };
  for (const auto& [path, value] : expected) {
    if (!under(path)) {
      continue;
    }
    const auto it = actual.find(path);
    if (it == actual.end()) {
      out.push_back(path + " = " + value.dump() + " comes back as nothing");
    } else if (!sameValue(value, it->second, quantities.contains(schemaPathOf(path)))) {
      out.push_back(path + " = " + value.dump() + " comes back as " + it->second.dump());
    }
  }
  for (const auto& [path, value] : actual) {
    if (under(path) && !expected.contains(path)) {
      out.push_back(path + " = " + value.dump() + " comes back where there was nothing");
    }
  }
  return out;
}

class CrdSchemaTest : public ::testing::TestWithParam<KindCase> {
protected:
  void SetUp() override {
    schema_ = crdSchema(GetParam().file, GetParam().kind);
    ASSERT_TRUE(schema_.is_object()) << GetParam().file;
    for (const char* part : {"spec", "status"}) {
      ASSERT_TRUE(schema_["properties"].contains(part))
          << GetParam().file << " declares no " << part;
      std::vector<std::string> segments{part};
      walkSchema(schema_["properties"][part], segments, facts_);
    }
  }

  std::string_view kind() const { return GetParam().kind; }

  Json example(Shape shape) const {
    ExampleWriter writer(shape);
    Json object = {{"apiVersion", kApiVersion},
                   {"kind", kind()},
                   {"metadata", {{"name", "example"}, {"namespace", "ns"}}}};
    for (const char* part : {"spec", "status"}) {
      object[part] = writer.write(schema_["properties"][part], part);
    }
    EXPECT_THAT(writer.problems(), IsEmpty());
    return object;
  }

  // What the API server would hold for `object`: its spec and status defaulted.
  Json defaulted(Json object) const {
    for (const char* part : {"spec", "status"}) {
      if (object.contains(part)) {
        object[part] = applyDefaults(schema_["properties"][part], object[part]);
      }
    }
    return object;
  }

  bool isQuantity(const std::string& instance_path) const {
    return facts_.quantities.contains(schemaPathOf(instance_path));
  }

  Json schema_;
  SchemaFacts facts_;
};

TEST_P(CrdSchemaTest, EverySchemaFieldIsReadAndWrittenBack) {
  const Json object = example(Shape::Full);
  const auto through = GetParam().through(object);
  ASSERT_TRUE(through.ok()) << "the decoder refuses an object the schema accepts: "
                            << through.status().message() << "\n"
                            << object.dump(1);
  const Leaves actual = leavesOf(through->written);
  std::vector<std::string> problems;
  for (const auto& [path, value] : leavesOf(defaulted(object))) {
    const auto it = actual.find(path);
    if (it == actual.end()) {
      problems.push_back(path + " = " + value.dump() + " is dropped: " +
                         (path.starts_with("spec") ? "the decoder does not read it"
                                                   : "the decoder or the status encoder loses it"));
    } else if (!sameValue(value, it->second, isQuantity(path))) {
      problems.push_back(path + " = " + value.dump() + " comes back as " + it->second.dump());
    }
  }
  EXPECT_THAT(problems, IsEmpty())
      << "schema fields the codec does not carry:" << joined(problems)
      << "\nexample: " << object.dump(1) << "\nwritten back: " << through->written.dump(1);
}

TEST_P(CrdSchemaTest, EveryFieldTheCodecsReadOrWriteIsInTheSchema) {
  const Json object = example(Shape::Full);
  const auto through = GetParam().through(object);
  ASSERT_TRUE(through.ok()) << through.status().message();

  EXPECT_THAT(through->gaps.members(), IsEmpty())
      << "typed members left empty by an object that sets every schema field: the decoder reads "
         "them from a path the schema lacks, or not at all";

  std::vector<std::string> problems;
  for (const char* part : {"spec", "status"}) {
    conform(schema_["properties"][part], through->written[part], part, problems);
  }
  EXPECT_THAT(problems, IsEmpty()) << "written back outside the schema:" << joined(problems)
                                   << "\nwritten back: " << through->written.dump(1);

  Json again_object = {{"apiVersion", kApiVersion},
                       {"kind", kind()},
                       {"metadata", {{"name", "example"}, {"namespace", "ns"}}}};
  again_object["spec"] = through->written["spec"];
  again_object["status"] = through->written["status"];
  const auto again = GetParam().through(again_object);
  ASSERT_TRUE(again.ok()) << "what was written back does not decode: " << again.status().message();
  EXPECT_EQ(again->written.dump(1), through->written.dump(1))
      << "decoding what was written back gives something else";
}

TEST_P(CrdSchemaTest, EverySchemaDefaultIsTheDecodersDefault) {
  const Json object = example(Shape::Full);
  std::vector<std::string> problems;
  for (const FieldAt& field : facts_.defaults) {
    Json without = object;
    removeAt(without, field.segments);
    const auto through = GetParam().through(without);
    if (!through.ok()) {
      problems.push_back(field.path + ": the decoder refuses the object without it: " +
                         through.status().message());
      continue;
    }
    for (const std::string& difference :
         differencesUnder(leavesOf(defaulted(without)), leavesOf(through->written), field.path,
                          facts_.quantities)) {
      problems.push_back(field.path + " defaults to " + field.value.dump() +
                         "; without it: " + difference);
    }
  }
  EXPECT_THAT(problems, IsEmpty()) << "defaults that disagree:" << joined(problems);
}

TEST_P(CrdSchemaTest, EveryValueTheSchemaAllowsIsReadAndWrittenBack) {
  const Json object = example(Shape::Full);
  std::vector<std::string> problems;
  for (const FieldAt& field : facts_.alternatives) {
    Json variant = object;
    setAt(variant, field.segments, field.value);
    const std::string what = field.path + " = " + field.value.dump();
    const auto through = GetParam().through(variant);
    if (!through.ok()) {
      problems.push_back(what + ": the decoder refuses it: " + through.status().message());
      continue;
    }
    for (const std::string& difference :
         differencesUnder(leavesOf(defaulted(variant)), leavesOf(through->written), field.path,
                          facts_.quantities)) {
      problems.push_back(what + ": " + difference);
    }
  }
  EXPECT_THAT(problems, IsEmpty())
      << "values the schema allows that the codec does not carry:" << joined(problems);
}

TEST_P(CrdSchemaTest, TheCodecsFillNothingTheSchemaLeavesAbsent) {
  const Json skeleton = example(Shape::Skeleton);
  std::vector<std::pair<std::string, Json>> variants{{"the skeleton", skeleton}};
  for (const FieldAt& container : facts_.optional_containers) {
    Json without = skeleton;
    removeAt(without, container.segments);
    variants.emplace_back("the skeleton without " + container.path, std::move(without));
  }
  std::map<std::string, std::string> problems;  // the problem -> the first variant that shows it
  std::set<const OneSided*> used;
  for (const auto& [variant, object] : variants) {
    const auto through = GetParam().through(object);
    if (!through.ok()) {
      problems.emplace("the decoder refuses it: " + through.status().message(), variant);
      continue;
    }
    const Leaves expected = leavesOf(defaulted(object));
    const Leaves actual = leavesOf(through->written);
    for (const auto& [path, value] : actual) {
      if (expected.contains(path)) {
        continue;
      }
      if (const OneSided* entry = oneSided(kind(), schemaPathOf(path)); entry != nullptr) {
        used.insert(entry);
      } else {
        problems.emplace(schemaPathOf(path) + " = " + value.dump() +
                             " is filled in where the object had nothing and the schema has "
                             "no default",
                         variant);
      }
    }
    for (const auto& [path, value] : expected) {
      const auto it = actual.find(path);
      if (it == actual.end() || !sameValue(value, it->second, isQuantity(path))) {
        problems.emplace(schemaPathOf(path) + " = " + value.dump() + " comes back as " +
                             (it == actual.end() ? std::string("nothing") : it->second.dump()),
                         variant);
      }
    }
  }
  std::vector<std::string> lines;
  for (const auto& [problem, variant] : problems) {
    lines.push_back(problem + " (first seen in " + variant + ")");
  }
  EXPECT_THAT(lines, IsEmpty()) << "values the codec makes up:" << joined(lines);
  for (const OneSided& entry : kOneSided) {
    EXPECT_TRUE((entry.kind != kind() && entry.kind != "*") || used.contains(&entry))
        << "kOneSided lists " << entry.path << ", which the codec no longer fills: remove it";
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, CrdSchemaTest, ::testing::ValuesIn(kKinds),
                         [](const ::testing::TestParamInfo<KindCase>& param) {
                           return std::string(param.param.kind);
                         });

// ---------------------------------------------------------------------------------------------
// The files.

std::set<std::string> yamlFilesIn(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".yaml" && name != "kustomization.yaml") {
      out.insert(name);
    }
  }
  return out;
}

TEST(CrdFiles, EveryCrdUnderDeployIsAKindThisTestChecks) {
  std::set<std::string> checked;
  for (const KindCase& kind : kKinds) {
    checked.insert(std::string(kind.file));
  }
  EXPECT_EQ(yamlFilesIn(KVC_CRD_DIR), checked);
  const Json kustomization = parseSingleDocument(fs::path(KVC_CRD_DIR) / "kustomization.yaml");
  const auto resources =
      kustomization.value("resources", Json::array()).get<std::vector<std::string>>();
  EXPECT_EQ(std::set<std::string>(resources.begin(), resources.end()), checked)
      << "deploy/crds/kustomization.yaml installs another set";
}

TEST(CrdFiles, TheHelmChartShipsTheSameCrds) {
  EXPECT_EQ(yamlFilesIn(KVC_HELM_CRD_DIR), yamlFilesIn(KVC_CRD_DIR));
  for (const std::string& file : yamlFilesIn(KVC_CRD_DIR)) {
    EXPECT_EQ(readFile(fs::path(KVC_HELM_CRD_DIR) / file), readFile(fs::path(KVC_CRD_DIR) / file))
        << file << " differs between the Helm chart and deploy/crds";
  }
}

// The index functions read raw objects, not the decoders' typed values (indexes.h).
TEST(CrdIndexes, TheIndexFunctionsReadSchemaPathsWithTheSchemasDefault) {
  const Json binding_schema = crdSchema(kKinds[2].file, kKindBinding);
  const Json pool_schema = crdSchema(kKinds[1].file, kKindPool);
  ExampleWriter writer(Shape::Full);
  Json binding = {{"metadata", {{"name", "b"}, {"namespace", "ns"}}},
                  {"spec", writer.write(binding_schema["properties"]["spec"], "spec")}};
  Json pool = {{"metadata", {{"name", "p"}}},
               {"spec", writer.write(pool_schema["properties"]["spec"], "spec")}};
  ASSERT_THAT(writer.problems(), IsEmpty());

  EXPECT_EQ(bindingPool(binding),
            std::vector<std::string>{binding["spec"]["poolRef"]["name"].get<std::string>()});
  EXPECT_EQ(bindingDomain(binding),
            std::vector<std::string>{binding["spec"]["domain"]["name"].get<std::string>()});
  EXPECT_EQ(poolBackends(pool), pool["spec"]["backends"].get<std::vector<std::string>>());

  binding["spec"]["domain"].erase("name");
  const Json domain_default =
      binding_schema["properties"]["spec"]["properties"]["domain"]["properties"]["name"]["default"];
  EXPECT_EQ(bindingDomain(binding), std::vector<std::string>{domain_default.get<std::string>()});
}

}  // namespace
}  // namespace kvc::api
