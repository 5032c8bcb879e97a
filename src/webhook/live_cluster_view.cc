#include "kvc/webhook/live_cluster_view.h"

#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"

namespace kvc::webhook {
namespace {

template <typename T>
policy::Lookup<T> decoded(const Json& object, Result<T> (*decode)(const Json&)) {
  Result<T> value = decode(object);
  if (!value.ok()) {
    return value.status();
  }
  return std::optional<T>(std::move(value).value());
}

// Reads `name` live; NotFound is an answer (nullopt), anything else an error.
template <typename T>
policy::Lookup<T> liveRead(const kube::Api& api, std::string_view name,
                           Result<T> (*decode)(const Json&)) {
  kube::ApiResult<std::optional<Json>> object = api.getOptional(name);
  if (!object.ok()) {
    return object.status();
  }
  if (!object->has_value()) {
    return std::optional<T>();
  }
  return decoded(**object, decode);
}

// From the cache (by `key`), or live on a miss (or without a cache).
template <typename T>
policy::Lookup<T> cachedRead(const runtime::Cache* cache, const kube::Api& api,
                             const std::string& key, std::string_view name,
                             Result<T> (*decode)(const Json&)) {
  if (cache != nullptr) {
    if (runtime::ObjectPtr object = cache->get(key)) {
      return decoded(*object, decode);
    }
  }
  return liveRead(api, name, decode);
}

}  // namespace

LiveClusterView::LiveClusterView(kube::ClientPtr client, const runtime::Cache* bindings,
                                 const runtime::Cache* pools, const runtime::Cache* backends,
                                 std::chrono::milliseconds timeout)
    : bindings_api_(
          kube::Api(client, kube::resources::kvCachePoolBindings()).withTimeout(timeout)),
      pools_api_(kube::Api(client, kube::resources::kvCachePools()).withTimeout(timeout)),
      backends_api_(kube::Api(client, kube::resources::kvCacheBackends()).withTimeout(timeout)),
      bindings_(bindings), pools_(pools), backends_(backends) {}

policy::Lookup<api::KVCachePoolBinding> LiveClusterView::binding(std::string_view ns,
                                                                 std::string_view name) const {
  return cachedRead(bindings_, bindings_api_.inNamespace(std::string(ns)),
                    kube::object::key(ns, name), name, &api::bindingFromJson);
}

policy::Lookup<api::KVCachePool> LiveClusterView::pool(std::string_view name) const {
  return cachedRead(pools_, pools_api_, std::string(name), name, &api::poolFromJson);
}

policy::Lookup<api::KVCacheBackend> LiveClusterView::backend(std::string_view name) const {
  return cachedRead(backends_, backends_api_, std::string(name), name, &api::backendFromJson);
}

}  // namespace kvc::webhook
