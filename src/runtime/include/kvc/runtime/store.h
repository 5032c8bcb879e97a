#pragma once
// The informer's cache: objects by key ("namespace/name"), with index functions (client-go's
// thread_safe_store.go and Indexer; kube-rs reflector/store.rs).
//
// One writer, many readers (STYLE.md §6.11): only the informer that owns a Store writes to it;
// everyone else sees the read-only Cache interface. Objects come out as shared immutable values
// (ObjectPtr): a reader keeps what it got even after the cache moves on, and a controller that
// wants to change an object copies it first.
//
// Memory: a parsed JSON tree costs five to six times its text (every value is a heap node), so
// the store keeps each object packed (MessagePack, about the size of its JSON text) and unpacks
// it on read. A read is a decode (microseconds for the projected objects the operator caches);
// 10,000 cached Pods cost tens of MiB instead of hundreds. See docs/operator.md.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "kvc/common/json.h"

namespace kvc::runtime {

using ObjectPtr = std::shared_ptr<const Json>;
// An object packed as MessagePack.
using Packed = std::shared_ptr<const std::string>;

Packed packObject(const Json& object);
// Unpacks; a null or undecodable input gives nullptr.
ObjectPtr unpackObject(const Packed& packed);

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

  // The same reads without unpacking, each object with its key: for a reader that keeps its own
  // decoded copy per stored version (a Packed value is replaced, never changed, on every update).
  virtual Packed getPacked(const std::string& key) const = 0;
  virtual std::vector<std::pair<std::string, Packed>> packedList() const = 0;
  virtual std::vector<std::pair<std::string, Packed>> packedByIndex(
      const std::string& index, const std::string& value) const = 0;
};

// Cache
class Store final : public Cache {
public:
  Store();

  // Adds an index; objects already stored are indexed too.
  void addIndex(const std::string& name, IndexFunc fn);
  bool hasIndex(const std::string& name) const;

  ObjectPtr get(const std::string& key) const override;
  std::vector<ObjectPtr> list() const override;
  std::vector<std::string> listKeys() const override;
  std::vector<ObjectPtr> byIndex(const std::string& index, const std::string& value) const override;
  std::size_t size() const override;
  Packed getPacked(const std::string& key) const override;
  std::vector<std::pair<std::string, Packed>> packedList() const override;
  std::vector<std::pair<std::string, Packed>> packedByIndex(
      const std::string& index, const std::string& value) const override;

  // The object's resourceVersion, without unpacking.
  std::string version(const std::string& key) const;

  // Writers (the owning informer only). `object` is the unpacked form of `packed` (indexes are
  // computed from it). Each returns the packed object it displaced, if any.
  Packed upsert(const std::string& key, const Json& object, Packed packed);
  Packed remove(const std::string& key);

  // Replacing the whole content (a relist) without a moment where readers see it half done:
  // stage every object, then commit, which returns what is no longer there.
  void stage(const std::string& key, const Json& object, Packed packed);
  std::vector<std::pair<std::string, Packed>> commitStaged();
  void discardStaged() { staged_.clear(); }

private:
  struct Entry {
    Packed packed;
    std::string version;
    // The values this object is indexed under, per index (to unindex without unpacking).
    std::vector<std::pair<std::string, std::vector<std::string>>> indexed;
  };
  using Indices = std::map<std::string, std::map<std::string, std::set<std::string>>>;

  Entry makeEntry(const Json& object, Packed packed) const;
  static void indexInto(Indices& indices, const std::string& key, const Entry& entry);
  static void unindexFrom(Indices& indices, const std::string& key, const Entry& entry);

  mutable std::shared_mutex mutex_;
  std::map<std::string, Entry> items_;
  std::map<std::string, IndexFunc> index_fns_;
  // index name -> indexed value -> keys
  Indices indices_;
  // The relist being staged (writer thread only).
  std::map<std::string, Entry> staged_;
};

}  // namespace kvc::runtime
