#include "kvc/runtime/store.h"

#include <mutex>

namespace kvc::runtime {
namespace {

std::vector<std::string> namespaceOf(const Json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return {};
  }
  auto ns = meta->find("namespace");
  if (ns == meta->end() || !ns->is_string()) {
    return {};
  }
  return {ns->get<std::string>()};
}

}  // namespace

Store::Store() { index_fns_[kNamespaceIndex] = &namespaceOf; }

void Store::addIndex(const std::string& name, IndexFunc fn) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  indices_.erase(name);
  index_fns_[name] = std::move(fn);
  auto& index = indices_[name];
  for (const auto& [key, object] : items_) {
    for (const std::string& value : index_fns_[name](*object)) {
      index[value].insert(key);
    }
  }
}

ObjectPtr Store::get(const std::string& key) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> Store::list() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, object] : items_) {
    out.push_back(object);
  }
  return out;
}

std::vector<std::string> Store::listKeys() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, object] : items_) {
    out.push_back(key);
  }
  return out;
}

std::vector<ObjectPtr> Store::byIndex(const std::string& index, const std::string& value) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<ObjectPtr> out;
  auto idx = indices_.find(index);
  if (idx == indices_.end()) {
    return out;
  }
  auto keys = idx->second.find(value);
  if (keys == idx->second.end()) {
    return out;
  }
  for (const std::string& key : keys->second) {
    auto it = items_.find(key);
    if (it != items_.end()) {
      out.push_back(it->second);
    }
  }
  return out;
}

std::size_t Store::size() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return items_.size();
}

void Store::indexLocked(const std::string& key, const Json& object) {
  for (const auto& [name, fn] : index_fns_) {
    auto& index = indices_[name];
    for (const std::string& value : fn(object)) {
      index[value].insert(key);
    }
  }
}

void Store::unindexLocked(const std::string& key, const Json& object) {
  for (const auto& [name, fn] : index_fns_) {
    auto& index = indices_[name];
    for (const std::string& value : fn(object)) {
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

ObjectPtr Store::upsert(const std::string& key, ObjectPtr object) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  ObjectPtr old;
  auto it = items_.find(key);
  if (it != items_.end()) {
    old = std::move(it->second);
    unindexLocked(key, *old);
    it->second = object;
  } else {
    items_.emplace(key, object);
  }
  indexLocked(key, *object);
  return old;
}

ObjectPtr Store::remove(const std::string& key) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto it = items_.find(key);
  if (it == items_.end()) {
    return nullptr;
  }
  ObjectPtr old = std::move(it->second);
  items_.erase(it);
  unindexLocked(key, *old);
  return old;
}

std::map<std::string, ObjectPtr> Store::replace(std::map<std::string, ObjectPtr> objects) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  std::map<std::string, ObjectPtr> old = std::move(items_);
  items_ = std::move(objects);
  for (auto& [name, index] : indices_) {
    index.clear();
  }
  for (const auto& [key, object] : items_) {
    indexLocked(key, *object);
  }
  return old;
}

}  // namespace kvc::runtime
