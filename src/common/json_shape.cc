#include "kvc/common/json_shape.h"

#include <algorithm>
#include <vector>

namespace kvc {
namespace {

// One open container: how many members an object holds so far (arrays keep 0).
struct Open {
  bool object = false;
  std::size_t members = 0;
};

class ShapeScan {
public:
  explicit ShapeScan(const JsonShapeLimits& limits) : limits_(limits) {
    open_.reserve(std::min<std::size_t>(limits.max_depth, 64));
  }

  std::optional<JsonShapeRefusal> run(std::string_view text) {
    for (std::size_t i = 0; i < text.size() && !refusal_; ++i) {
      const char c = text[i];
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        continue;
      }
      if (first_pending_) {  // the first element or member of the container just opened
        first_pending_ = false;
        if (c != ']' && c != '}') {
          addValue();
        }
      }
      const bool key = expecting_key_;
      expecting_key_ = false;
      if (c == '"') {
        const std::size_t end = skipString(text, i);
        if (key) {
          chargeKey(end - i - 1);
        }
        i = end;
      } else if (c == '[' || c == '{') {
        open(c == '{');
      } else if (c == ']' || c == '}') {
        if (!open_.empty()) {
          open_.pop_back();
        }
      } else if (c == ',') {
        addValue();  // the next element, or the next member (its key comes next)
        expecting_key_ = !open_.empty() && open_.back().object;
      } else if (c == ':') {
        addValue();  // the member's value
      }
    }
    return refusal_;
  }

private:
  // The index of the closing quote of the string opening at `at` (or the end of the text).
  static std::size_t skipString(std::string_view text, std::size_t at) {
    std::size_t i = at + 1;
    while (i < text.size() && text[i] != '"') {
      i += text[i] == '\\' ? 2 : 1;
    }
    return std::min(i, text.size());
  }

  void open(bool object) {
    if (open_.empty()) {
      addValue();  // the outermost container; any other was counted where it stands
    }
    open_.push_back({object, 0});
    first_pending_ = true;
    expecting_key_ = object;
    if (open_.size() > limits_.max_depth) {
      refusal_ = JsonShapeRefusal{"json_depth", "the JSON nests deeper than " +
                                                    std::to_string(limits_.max_depth) + " levels"};
    }
  }

  void addValue() {
    ++values_;
    if (limits_.max_values != 0 && values_ > limits_.max_values) {
      refusal_ = JsonShapeRefusal{"json_values", "the JSON holds more than " +
                                                     std::to_string(limits_.max_values) +
                                                     " values (elements, members and containers)"};
    }
  }

  void chargeKey(std::size_t length) {
    if (open_.empty()) {
      return;
    }
    Open& object = open_.back();
    key_work_ += object.members * (length + 32);
    ++object.members;
    if (limits_.max_key_work != 0 && key_work_ > limits_.max_key_work) {
      refusal_ = JsonShapeRefusal{
          "json_keys", "the JSON's objects have too many members to index (over " +
                           std::to_string(limits_.max_key_work) + " key bytes compared)"};
    }
  }

  const JsonShapeLimits& limits_;
  std::vector<Open> open_;
  bool first_pending_ = false;
  bool expecting_key_ = false;
  std::size_t values_ = 0;
  std::size_t key_work_ = 0;
  std::optional<JsonShapeRefusal> refusal_;
};

}  // namespace

std::optional<JsonShapeRefusal> checkJsonShape(std::string_view text,
                                               const JsonShapeLimits& limits) {
  if (limits.max_depth == 0) {
    return std::nullopt;
  }
  return ShapeScan(limits).run(text);
}

}  // namespace kvc
