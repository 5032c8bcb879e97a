#include "kvc/runtime/store.h"

#include <mutex>

namespace kvc::runtime {
namespace {

std::vector<std::string> namespaceOf(const Json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return {};
  }
  auto namespace_name = meta->find("namespace");
  if (namespace_name == meta->end() || !namespace_name->is_string()) {
    return {};
  }
  return {namespace_name->get<std::string>()};
}

std::string versionOf(const Json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return {};
  }
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

}  // namespace

Packed packObject(const Json& object) {
  auto out = std::make_shared<std::string>();
  Json::to_msgpack(object, *out);
  out->shrink_to_fit();
  return out;
}

ObjectPtr unpackObject(const Packed& packed) {
  if (!packed) {
    return nullptr;
  }
  Json object = Json::from_msgpack(*packed, /*strict=*/true, /*allow_exceptions=*/false);
  if (object.is_discarded()) {
    return nullptr;
  }
  return std::make_shared<const Json>(std::move(object));
}

Store::Store() { index_fns_[kNamespaceIndex] = &namespaceOf; }

Store::Entry Store::makeEntry(const Json& object, Packed packed) const {
  Entry entry;
  entry.packed = std::move(packed);
  entry.version = versionOf(object);
  for (const auto& [name, fn] : index_fns_) {
    std::vector<std::string> values = fn(object);
    if (!values.empty()) {
      entry.indexed.emplace_back(name, std::move(values));
    }
  }
  return entry;
}

void Store::indexInto(Indices& indices, const std::string& key, const Entry& entry) {
  for (const auto& [name, values] : entry.indexed) {
    auto& index = indices[name];
    for (const std::string& value : values) {
      index[value].insert(key);
    }
  }
}

void Store::unindexFrom(Indices& indices, const std::string& key, const Entry& entry) {
  for (const auto& [name, values] : entry.indexed) {
    auto& index = indices[name];
    for (const std::string& value : values) {
      auto it = index.find(value);
      if (it != index.end()) {
        it->second.erase(key);
        if (it->second.empty()) {
          index.erase(it);
        }
      }
    }
  }
}

void Store::addIndex(const std::string& name, IndexFunc fn) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  index_fns_[name] = std::move(fn);
  // Re-index what is stored (only ever before start in practice; unpacking is fine here).
  indices_.clear();
  for (auto& [key, entry] : items_) {
    ObjectPtr object = unpackObject(entry.packed);
    if (object) {
      entry = makeEntry(*object, entry.packed);
    }
    indexInto(indices_, key, entry);
  }
}

bool Store::hasIndex(const std::string& name) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return index_fns_.count(name) > 0;
}

ObjectPtr Store::get(const std::string& key) const { return unpackObject(getPacked(key)); }

Packed Store::getPacked(const std::string& key) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second.packed;
}

std::string Store::version(const std::string& key) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = items_.find(key);
  return it == items_.end() ? std::string() : it->second.version;
}

namespace {

std::vector<ObjectPtr> unpackAll(const std::vector<std::pair<std::string, Packed>>& packed) {
  std::vector<ObjectPtr> out;
  out.reserve(packed.size());
  for (const auto& [key, p] : packed) {
    if (ObjectPtr object = unpackObject(p)) {
      out.push_back(std::move(object));
    }
  }
  return out;
}

}  // namespace

std::vector<ObjectPtr> Store::list() const { return unpackAll(packedList()); }

std::vector<std::pair<std::string, Packed>> Store::packedList() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<std::pair<std::string, Packed>> out;
  out.reserve(items_.size());
  for (const auto& [key, entry] : items_) {
    out.emplace_back(key, entry.packed);
  }
  return out;
}

std::vector<std::string> Store::listKeys() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, entry] : items_) {
    out.push_back(key);
  }
  return out;
}

std::vector<ObjectPtr> Store::byIndex(const std::string& index, const std::string& value) const {
  return unpackAll(packedByIndex(index, value));
}

std::vector<std::pair<std::string, Packed>> Store::packedByIndex(const std::string& index,
                                                                 const std::string& value) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<std::pair<std::string, Packed>> out;
  auto idx = indices_.find(index);
  if (idx == indices_.end()) {
    return out;
  }
  auto keys = idx->second.find(value);
  if (keys == idx->second.end()) {
    return out;
  }
  out.reserve(keys->second.size());
  for (const std::string& key : keys->second) {
    auto it = items_.find(key);
    if (it != items_.end()) {
      out.emplace_back(key, it->second.packed);
    }
  }
  return out;
}

std::size_t Store::size() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return items_.size();
}

Packed Store::upsert(const std::string& key, const Json& object, Packed packed) {
  Entry entry = makeEntry(object, std::move(packed));
  std::unique_lock<std::shared_mutex> lock(mutex_);
  Packed old;
  auto it = items_.find(key);
  if (it != items_.end()) {
    old = it->second.packed;
    unindexFrom(indices_, key, it->second);
    it->second = std::move(entry);
    indexInto(indices_, key, it->second);
  } else {
    auto inserted = items_.emplace(key, std::move(entry)).first;
    indexInto(indices_, key, inserted->second);
  }
  return old;
}

Packed Store::remove(const std::string& key) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto it = items_.find(key);
  if (it == items_.end()) {
    return nullptr;
  }
  Packed old = it->second.packed;
  unindexFrom(indices_, key, it->second);
  items_.erase(it);
  return old;
}

void Store::stage(const std::string& key, const Json& object, Packed packed) {
  staged_[key] = makeEntry(object, std::move(packed));
}

std::vector<std::pair<std::string, Packed>> Store::commitStaged() {
  Indices fresh;
  for (const auto& [key, entry] : staged_) {
    indexInto(fresh, key, entry);
  }
  std::map<std::string, Entry> old;
  {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    old = std::move(items_);
    items_ = std::move(staged_);
    indices_ = std::move(fresh);
  }
  staged_.clear();
  std::vector<std::pair<std::string, Packed>> gone;
  for (auto& [key, entry] : old) {
    if (items_.count(key) == 0) {  // the writer is the only one who changes items_
      gone.emplace_back(key, std::move(entry.packed));
    }
  }
  return gone;
}

}  // namespace kvc::runtime
