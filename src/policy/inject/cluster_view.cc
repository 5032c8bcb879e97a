#include "kvc/policy/inject/cluster_view.h"

namespace kvc::policy {

void ClusterSnapshot::add(api::KVCachePoolBinding binding) {
  auto key = std::make_pair(binding.metadata.namespace_name, binding.metadata.name);
  bindings_.insert_or_assign(std::move(key), std::move(binding));
}

void ClusterSnapshot::add(api::KVCachePool pool) {
  std::string key = pool.metadata.name;
  pools_.insert_or_assign(std::move(key), std::move(pool));
}

void ClusterSnapshot::add(api::KVCacheBackend backend) {
  std::string key = backend.metadata.name;
  backends_.insert_or_assign(std::move(key), std::move(backend));
}

Lookup<api::KVCachePoolBinding> ClusterSnapshot::binding(std::string_view namespace_name,
                                                         std::string_view name) const {
  auto it = bindings_.find(std::make_pair(std::string(namespace_name), std::string(name)));
  if (it == bindings_.end()) {
    return std::optional<api::KVCachePoolBinding>();
  }
  return std::optional<api::KVCachePoolBinding>(it->second);
}

Lookup<api::KVCachePool> ClusterSnapshot::pool(std::string_view name) const {
  auto it = pools_.find(name);
  if (it == pools_.end()) {
    return std::optional<api::KVCachePool>();
  }
  return std::optional<api::KVCachePool>(it->second);
}

Lookup<api::KVCacheBackend> ClusterSnapshot::backend(std::string_view name) const {
  auto it = backends_.find(name);
  if (it == backends_.end()) {
    return std::optional<api::KVCacheBackend>();
  }
  return std::optional<api::KVCacheBackend>(it->second);
}

}  // namespace kvc::policy
