#pragma once
// What injection needs to read from the cluster, behind one small interface.
//
// The webhook implements it with a live read of the Binding and informer caches for the pool and
// backend; `kvcache inject --cluster FILE` and the tests implement it with ClusterSnapshot. The
// injection pipeline asks in a fixed order (Binding, pool, backend) and stops at the first
// answer that refuses, so a refusal never depends on objects it did not need.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kvc/api/kvcache.h"
#include "kvc/common/status.h"

namespace kvc::policy {

// nullopt: the object does not exist. An error: the read failed, which is never reported as
// "does not exist".
template <typename T>
using Lookup = Result<std::optional<T>>;

class ClusterView {
public:
  virtual ~ClusterView() = default;
  virtual Lookup<api::KVCachePoolBinding> binding(std::string_view namespace_name,
                                                  std::string_view name) const = 0;
  virtual Lookup<api::KVCachePool> pool(std::string_view name) const = 0;
  virtual Lookup<api::KVCacheBackend> backend(std::string_view name) const = 0;
};

// An in-memory cluster: the objects of a cluster file, or a test's fixtures.
class ClusterSnapshot : public ClusterView {
public:
  void add(api::KVCachePoolBinding binding);
  void add(api::KVCachePool pool);
  void add(api::KVCacheBackend backend);

  // ClusterView
  Lookup<api::KVCachePoolBinding> binding(std::string_view namespace_name,
                                          std::string_view name) const override;
  Lookup<api::KVCachePool> pool(std::string_view name) const override;
  Lookup<api::KVCacheBackend> backend(std::string_view name) const override;

  std::size_t size() const { return bindings_.size() + pools_.size() + backends_.size(); }

private:
  std::map<std::pair<std::string, std::string>, api::KVCachePoolBinding, std::less<>> bindings_;
  std::map<std::string, api::KVCachePool, std::less<>> pools_;
  std::map<std::string, api::KVCacheBackend, std::less<>> backends_;
};

}  // namespace kvc::policy
