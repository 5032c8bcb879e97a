#include "kvc/common/yaml.h"

#include <yaml-cpp/depthguard.h>    // YAML::DeepRecursion (not in yaml.h)
#include <yaml-cpp/eventhandler.h>  // nor the event interface
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kvc/common/json_parse.h"
#include "kvc/common/text.h"
#include "yaml_internal.h"

// parseYamlDocuments: each document's JSON is built straight from yaml-cpp's parse events
// instead of through YAML::LoadAll's node tree, which lets the reader refuse what the library
// lets through:
//   - a stream on which the parser makes no progress. yaml-cpp 0.7 answers a document that
//     starts with ',' with an empty document without consuming the ',', forever, allocating
//     ~250 MB/s (jbeder/yaml-cpp#1040, fixed upstream by #1319): one stray comma in a manifest or
//     a kubeconfig hung the process until the kernel killed it;
//   - aliases that expand without bound ("billion laughs": nine lines of nested aliases name 10^9
//     values): at most kMaxAliasedValues values are copied through anchors and aliases;
//   - an alias inside the node it names (`&a [*a]`), a value without end;
//   - scalars that are not UTF-8, which a JSON string cannot hold (dump() throws on them).
// Depth is bounded by yaml-cpp itself (its DeepRecursion, about 500 levels of collections); the
// builder keeps its own stack, so it does not recurse.

namespace kvc {
namespace {

// Values a stream may copy through its anchors and aliases, all documents together. Manifests
// and kubeconfigs use few aliases, if any; a billion-laughs document reaches this in
// milliseconds.
constexpr std::size_t kMaxAliasedValues = 1'000'000;

// One finished node: its value, the text it has as a mapping key (a scalar's own text; a
// collection's JSON, computed when it is a key), and how many values it holds.
struct Node {
  Json value;
  std::optional<std::string> key;
  std::size_t values = 1;
  bool null_event = false;  // an empty or null node (a document made of one is skipped)
};

class JsonEvents : public YAML::EventHandler {
public:
  std::vector<YamlDocument> documents;

  void OnDocumentStart(const YAML::Mark& mark) override {
    // A document that consumed nothing is followed by another at the same place, forever.
    if (last_start_ && *last_start_ == mark.pos) {
      throw YAML::ParserException(mark, "unexpected token at the start of a document");
    }
    last_start_ = mark.pos;
    root_.reset();
  }

  void OnDocumentEnd() override {
    ++index_;
    if (root_ && !root_->null_event) {
      documents.push_back({std::move(root_->value), index_, root_line_});
    }
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    finish(Node{Json(nullptr), "~", 1, true}, anchor, mark);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      throw YAML::ParserException(mark, "the alias is inside the node it names");
    }
    charge(it->second.values, mark);
    finish(Node(it->second), YAML::NullAnchor, mark);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (!isUtf8(value)) {
      throw YAML::ParserException(mark, "the scalar is not valid UTF-8");
    }
    // yaml-cpp tags quoted (and literal/folded) scalars "!" and plain ones "?".
    Json json = tag == "!" || tag == "tag:yaml.org,2002:str" ? Json(value) : resolvePlain(value);
    finish(Node{std::move(json), value}, anchor, mark);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_.push_back(Open{Json::array(), anchor, mark});
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open_.push_back(Open{Json::object(), anchor, mark});
    open_.back().members = std::make_unique<JsonObjectBuilder>(open_.back().value);
  }
  void OnMapEnd() override { close(); }

private:
  struct Open {
    Json value;
    YAML::anchor_t anchor;
    YAML::Mark mark;
    std::size_t values = 1;
    std::unique_ptr<JsonObjectBuilder> members{};  // mappings only (linear in their keys)
    std::optional<std::string> key{};              // a mapping's key waiting for its value
  };

  void charge(std::size_t values, const YAML::Mark& mark) {
    aliased_ += values;
    if (aliased_ > kMaxAliasedValues) {
      throw YAML::ParserException(
          mark, "the aliases expand to more than " + std::to_string(kMaxAliasedValues) + " values");
    }
  }

  void close() {
    Open done = std::move(open_.back());
    open_.pop_back();
    finish(Node{std::move(done.value), std::nullopt, done.values}, done.anchor, done.mark);
  }

  // Places a finished node: the document's root, the next item of a sequence, or a mapping's
  // key or value. An anchored node is remembered (a copy, charged like an alias).
  void finish(Node node, YAML::anchor_t anchor, const YAML::Mark& mark) {
    if (anchor != YAML::NullAnchor) {
      charge(node.values, mark);
      anchors_[anchor] = node;
    }
    if (open_.empty()) {
      root_line_ = mark.line + 1;
      root_ = std::move(node);
      return;
    }
    Open& parent = open_.back();
    parent.values += node.values;
    if (parent.value.is_array()) {
      parent.value.get_ref<Json::array_t&>().push_back(std::move(node.value));
    } else if (!parent.key) {
      // A key that is itself a collection (`? [a, b]`) becomes its JSON text.
      parent.key = node.key ? std::move(*node.key) : node.value.dump();
    } else {
      parent.members->member(std::move(*parent.key)) = std::move(node.value);
      parent.key.reset();
    }
  }

  std::vector<Open> open_;
  std::map<YAML::anchor_t, Node> anchors_;
  std::size_t aliased_ = 0;
  std::optional<Node> root_;
  int root_line_ = 0;
  int index_ = 0;
  std::optional<int> last_start_;  // where the last document started (Mark::pos)
};

}  // namespace

Result<std::vector<YamlDocument>> parseYamlDocuments(std::string_view text) {
  std::istringstream input{std::string(text)};
  JsonEvents events;
  try {
    YAML::Parser parser(input);
    while (parser.HandleNextDocument(events)) {
    }
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own bound (it says only "bad file"): each level of a collection costs it about
    // four recursions.
    return invalidArgument(
        "YAML nested too deep at line " + std::to_string(e.mark.line + 1) + ", column " +
        std::to_string(e.mark.column + 1) + ": the parser stops at a recursion depth of " +
        std::to_string(e.depth()) + " (about 500 levels of nested sequences and mappings)");
  } catch (const YAML::Exception& e) {
    return invalidArgument("YAML syntax error at line " + std::to_string(e.mark.line + 1) +
                           ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  return std::move(events.documents);
}

}  // namespace kvc
