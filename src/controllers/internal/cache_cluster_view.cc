#include "internal/cache_cluster_view.h"

#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/pool.h"
#include "kvc/kube/client.h"
#include "kvc/kube/object.h"

namespace kvc::controllers::internal {
namespace {

template <typename T>
policy::Lookup<T> cached(const runtime::Cache& cache, const std::string& key,
                         Result<T> (*decode)(const Json&)) {
  runtime::ObjectPtr object = cache.get(key);
  if (!object) {
    return std::optional<T>();
  }
  Result<T> value = decode(*object);
  if (!value.ok()) {
    return value.status();
  }
  return std::optional<T>(std::move(value).value());
}

}  // namespace

policy::Lookup<api::KVCachePoolBinding> CacheClusterView::binding(std::string_view namespace_name,
                                                                  std::string_view name) const {
  return cached(bindings_, kube::object::key(namespace_name, name), &api::bindingFromJson);
}

policy::Lookup<api::KVCachePool> CacheClusterView::pool(std::string_view name) const {
  return cached(pools_, std::string(name), &api::poolFromJson);
}

policy::Lookup<api::KVCacheBackend> CacheClusterView::backend(std::string_view name) const {
  return cached(backends_, std::string(name), &api::backendFromJson);
}

}  // namespace kvc::controllers::internal
