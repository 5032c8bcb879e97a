#include "kvc/common/json_parse.h"

#include "kvc/common/text.h"

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace kvc {

JsonObjectBuilder::JsonObjectBuilder(Json& object) : object_(object.get_ptr<Json::object_t*>()) {}

Json& JsonObjectBuilder::member(std::string key) {
  Json::object_t::Container& members = *object_;
  if (index_.empty() && members.size() < kScanned) {
    for (auto& entry : members) {
      if (entry.first == key) {
        return entry.second;
      }
    }
  } else {
    const std::hash<std::string> hash;
    if (index_.empty()) {
      for (std::size_t i = 0; i < members.size(); ++i) {
        index_.emplace(hash(members[i].first), i);
      }
    }
    const std::size_t h = hash(key);
    const auto [first, last] = index_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      if (members[it->second].first == key) {
        return members[it->second].second;
      }
    }
    index_.emplace(h, members.size());
  }
  members.emplace_back(std::move(key), nullptr);
  return members.back().second;
}

namespace {

// nlohmann's SAX interface, building the value as its json_sax_dom_parser does, with each open
// object's keys indexed and the depth counted.
class BoundedBuilder {
public:
  Json root;
  std::optional<std::string> error;

  bool null() { return add(Json(nullptr)); }
  bool boolean(bool value) { return add(Json(value)); }
  bool number_integer(Json::number_integer_t value) { return add(Json(value)); }
  bool number_unsigned(Json::number_unsigned_t value) { return add(Json(value)); }
  bool number_float(Json::number_float_t value, const std::string&) { return add(Json(value)); }
  bool string(std::string& value) { return add(Json(std::move(value))); }
  bool binary(Json::binary_t& value) { return add(Json(std::move(value))); }

  bool start_object(std::size_t) { return open(Json::object()); }
  bool key(std::string& key) {
    slot_ = &open_.back().members->member(std::move(key));
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_array() { return close(); }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error = excerpt(e.what(), 200);
    return false;
  }

private:
  struct Open {
    Json* value;
    std::unique_ptr<JsonObjectBuilder> members;  // objects only
  };

  // Places a value: the document, the next element of the open array, or the value of the key
  // just read.
  Json* place(Json value) {
    if (open_.empty()) {
      root = std::move(value);
      return &root;
    }
    Json& container = *open_.back().value;
    if (container.is_array()) {
      container.get_ref<Json::array_t&>().push_back(std::move(value));
      return &container.get_ref<Json::array_t&>().back();
    }
    *slot_ = std::move(value);
    return slot_;
  }

  bool add(Json value) {
    place(std::move(value));
    return true;
  }

  bool open(Json container) {
    if (open_.size() >= kMaxJsonDepth) {
      error = "the JSON nests deeper than " + std::to_string(kMaxJsonDepth) +
              " levels of arrays and objects (kMaxJsonDepth)";
      return false;
    }
    Json* value = place(std::move(container));
    open_.push_back(
        {value, value->is_object() ? std::make_unique<JsonObjectBuilder>(*value) : nullptr});
    return true;
  }

  bool close() {
    open_.pop_back();
    return true;
  }

  std::vector<Open> open_;
  Json* slot_ = nullptr;
};

}  // namespace

Result<Json> parseJson(std::string_view text) {
  BoundedBuilder builder;
  const bool parsed = Json::sax_parse(text, &builder);
  if (!parsed || builder.error) {
    return invalidArgument(builder.error ? *builder.error : "not JSON");
  }
  return std::move(builder.root);
}

}  // namespace kvc
