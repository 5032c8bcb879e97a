#pragma once
// The informer's cache: objects by key ("namespace/name"), with index functions (client-go's
// thread_safe_store.go and Indexer; kube-rs reflector/store.rs).
//
// One writer, many readers (STYLE.md §6.11): only the informer that owns a Store writes to it;
// everyone else sees the read-only Cache interface. Objects are shared immutable values
// (ObjectPtr): a reader keeps what it got even after the cache moves on, and a controller that
// wants to change an object copies it first.

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "kvc/common/json.h"

namespace kvc::runtime {

using ObjectPtr = std::shared_ptr<const Json>;

// Values an object is indexed under (none = not indexed).
using IndexFunc = std::function<std::vector<std::string>(const Json&)>;

// The built-in index of every store: the object's namespace.
inline constexpr const char* kNamespaceIndex = "namespace";

// A read-only view of a cache.
class Cache {
public:
  virtual ~Cache() = default;
  virtual ObjectPtr get(const std::string& key) const = 0;
  virtual std::vector<ObjectPtr> list() const = 0;
  virtual std::vector<std::string> listKeys() const = 0;
  // Objects whose index `index` yields `value`; empty for an unknown index.
  virtual std::vector<ObjectPtr> byIndex(const std::string& index,
                                         const std::string& value) const = 0;
  virtual std::size_t size() const = 0;
};

// Cache
class Store final : public Cache {
public:
  Store();

  // Adds an index; objects already stored are indexed too.
  void addIndex(const std::string& name, IndexFunc fn);

  ObjectPtr get(const std::string& key) const override;
  std::vector<ObjectPtr> list() const override;
  std::vector<std::string> listKeys() const override;
  std::vector<ObjectPtr> byIndex(const std::string& index,
                                 const std::string& value) const override;
  std::size_t size() const override;

  // Writers (the owning informer only). Each returns the object it displaced, if any.
  ObjectPtr upsert(const std::string& key, ObjectPtr object);
  ObjectPtr remove(const std::string& key);
  // Replaces the whole content; returns the previous content.
  std::map<std::string, ObjectPtr> replace(std::map<std::string, ObjectPtr> objects);

private:
  void indexLocked(const std::string& key, const Json& object);
  void unindexLocked(const std::string& key, const Json& object);

  mutable std::shared_mutex mutex_;
  std::map<std::string, ObjectPtr> items_;
  std::map<std::string, IndexFunc> index_fns_;
  // index name -> indexed value -> keys
  std::map<std::string, std::map<std::string, std::set<std::string>>> indices_;
};

}  // namespace kvc::runtime
