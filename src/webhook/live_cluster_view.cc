#include "kvc/webhook/live_cluster_view.h"

#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/meta.h"
#include "kvc/api/pool.h"
#include "kvc/kube/resource.h"

namespace kvc::webhook {

LiveClusterView::LiveClusterView(kube::ClientPtr client, const runtime::Cache* bindings,
                                 const runtime::Cache* pools, const runtime::Cache* backends,
                                 std::chrono::milliseconds timeout)
    : bindings_(client, kube::resources::kvCachePoolBindings(), bindings, timeout),
      pools_(client, kube::resources::kvCachePools(), pools, timeout),
      backends_(client, kube::resources::kvCacheBackends(), backends, timeout) {}

policy::Lookup<api::KVCachePoolBinding> LiveClusterView::binding(std::string_view namespace_name,
                                                                 std::string_view name) const {
  return bindings_.getAs(namespace_name, name, &api::bindingFromJson);
}

policy::Lookup<api::KVCachePool> LiveClusterView::pool(std::string_view name) const {
  return pools_.getAs("", name, &api::poolFromJson);
}

policy::Lookup<api::KVCacheBackend> LiveClusterView::backend(std::string_view name) const {
  return backends_.getAs("", name, &api::backendFromJson);
}

LiveNamespaceLabels::LiveNamespaceLabels(kube::ClientPtr client, const runtime::Cache* namespaces,
                                         std::chrono::milliseconds timeout)
    : namespaces_(std::move(client), kube::resources::namespaces(), namespaces, timeout) {}

Result<std::optional<LiveNamespaceLabels::Labels>> LiveNamespaceLabels::labels(
    std::string_view namespace_name) const {
  KVC_ASSIGN_OR_RETURN(std::optional<runtime::ObjectPtr> found,
                       namespaces_.get("", namespace_name));
  if (!found) {
    return std::optional<Labels>();
  }
  const Json& object = **found;
  KVC_ASSIGN_OR_RETURN(
      api::ObjectMeta meta,
      api::objectMetaFromJson(object.is_object() ? object.value("metadata", Json()) : Json(),
                              "metadata"));
  return std::optional<Labels>(std::move(meta.labels));
}

}  // namespace kvc::webhook
