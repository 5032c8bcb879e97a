#pragma once
// The webhook's view of the cluster (DESIGN.md §3.1): the Binding read live from the API server,
// because a Binding created a moment ago or being deleted right now must be seen as it is; pools
// and backends from informer caches, with a consistent live read on a miss so an object the
// cache has not caught up with yet is not reported missing. Read errors stay errors — the
// injection reports them as an outage, never as "does not exist".

#include <chrono>
#include <memory>

#include "kvc/kube/client.h"
#include "kvc/policy/cluster_view.h"
#include "kvc/runtime/store.h"

namespace kvc::webhook {

class LiveClusterView : public policy::ClusterView {
public:
  // `pools` and `backends` are the caches of the informers on those kinds, which must outlive
  // the view; null reads every object live (`kvcache inject --kubeconfig`). `timeout` bounds
  // every live read.
  LiveClusterView(kube::ClientPtr client, const runtime::Cache* pools,
                  const runtime::Cache* backends, std::chrono::milliseconds timeout);

  // policy::ClusterView
  policy::Lookup<api::KVCachePoolBinding> binding(std::string_view ns,
                                                  std::string_view name) const override;
  policy::Lookup<api::KVCachePool> pool(std::string_view name) const override;
  policy::Lookup<api::KVCacheBackend> backend(std::string_view name) const override;

private:
  kube::Api bindings_;
  kube::Api pools_api_;
  kube::Api backends_api_;
  const runtime::Cache* pools_;
  const runtime::Cache* backends_;
};

}  // namespace kvc::webhook
