#pragma once
// The webhook's view of the cluster (DESIGN.md §3.1): Bindings, pools and backends from informer
// caches, with a consistent live read on a miss, so an object the cache has not caught up with
// yet (a Binding created a moment ago) is not reported missing. Read errors stay errors — the
// injection reports them as an outage, never as "does not exist".
//
// A Binding's deletion the cache has not seen yet is not a hole: the pool controller releases a
// Binding's ledger entry only once the webhook's timeout has passed since its deletionTimestamp
// and a fresh list of the labelled Pods naming it is empty, so a Pod admitted on a stale cache
// holds the Binding (HeldByWorkloads) instead of being injected against a released tenant.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kvc/kube/client.h"
#include "kvc/policy/inject/cluster_view.h"
#include "kvc/runtime/reader.h"
#include "kvc/runtime/store.h"

namespace kvc::webhook {

class LiveClusterView : public policy::ClusterView {
public:
  // `bindings`, `pools` and `backends` are the caches of the informers on those kinds, which
  // must outlive the view; null reads that kind live (`kvcache inject --kubeconfig`).
  // `timeout` bounds every live read.
  LiveClusterView(kube::ClientPtr client, const runtime::Cache* bindings,
                  const runtime::Cache* pools, const runtime::Cache* backends,
                  std::chrono::milliseconds timeout);

  // policy::ClusterView
  policy::Lookup<api::KVCachePoolBinding> binding(std::string_view namespace_name,
                                                  std::string_view name) const override;
  policy::Lookup<api::KVCachePool> pool(std::string_view name) const override;
  policy::Lookup<api::KVCacheBackend> backend(std::string_view name) const override;

private:
  // Each kind cached, else live (runtime/reader.h), every live read bounded by `timeout`.
  runtime::CachedReader bindings_;
  runtime::CachedReader pools_;
  runtime::CachedReader backends_;
};

// The labels of a namespace, for ModelDeployment admission's Pod Security level (the label
// pod-security.kubernetes.io/enforce): from the namespaces informer's cache, live on a miss (a
// namespace created a moment ago), each live read bounded by `timeout`. nullopt: the namespace
// does not exist (a live NotFound); any other failure is an error, never "no labels".
class LiveNamespaceLabels {
public:
  using Labels = std::map<std::string, std::string>;

  // `namespaces` (the informer's cache, which must outlive this) may be null: always live.
  LiveNamespaceLabels(kube::ClientPtr client, const runtime::Cache* namespaces,
                      std::chrono::milliseconds timeout);

  Result<std::optional<Labels>> labels(std::string_view namespace_name) const;

private:
  runtime::CachedReader namespaces_;
};

}  // namespace kvc::webhook
