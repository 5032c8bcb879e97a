#pragma once
// The cluster as the controllers' informer caches hold it, behind policy::ClusterView: what a
// ModelDeployment's Binding resolves through (policy::resolveBinding), the same function Pod
// injection calls. A key the cache does not hold does not exist: the controllers start only once
// their caches have synced, and an object that arrives later triggers a pass of its own (the
// watches of each controller's setupWithManager). An object that does not decode is an error, never
// "does not exist".

#include "kvc/policy/inject/cluster_view.h"
#include "kvc/runtime/store.h"

namespace kvc::controllers::internal {

class CacheClusterView final : public policy::ClusterView {
public:
  CacheClusterView(const runtime::Cache& bindings, const runtime::Cache& pools,
                   const runtime::Cache& backends)
      : bindings_(bindings), pools_(pools), backends_(backends) {}

  policy::Lookup<api::KVCachePoolBinding> binding(std::string_view namespace_name,
                                                  std::string_view name) const override;
  policy::Lookup<api::KVCachePool> pool(std::string_view name) const override;
  policy::Lookup<api::KVCacheBackend> backend(std::string_view name) const override;

private:
  const runtime::Cache& bindings_;
  const runtime::Cache& pools_;
  const runtime::Cache& backends_;
};

}  // namespace kvc::controllers::internal
