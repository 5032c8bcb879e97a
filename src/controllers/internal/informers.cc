#include "internal/informers.h"

#include "internal/store_objects.h"
#include "kvc/controllers/indexes.h"
#include "kvc/controllers/model_deployment_controller.h"
#include "kvc/runtime/settings_cache.h"

namespace kvc::controllers::internal {
namespace {

void indexOnce(runtime::Informer& informer, const char* name, runtime::IndexFunc fn) {
  if (!informer.hasIndex(name)) {
    informer.addIndex(name, std::move(fn));
  }
}

}  // namespace

Result<runtime::InformerPtr> Informers::informer(const kube::ResourceType& resource,
                                                 std::string namespace_name, std::string selector,
                                                 runtime::Transform transform) {
  runtime::InformerOptions options;
  options.resource = resource;
  options.namespace_name = std::move(namespace_name);
  options.label_selector = std::move(selector);
  options.transform = std::move(transform);
  return manager_.informerFor(options);
}

Result<runtime::InformerPtr> Informers::backends() {
  return informer(kube::resources::kvCacheBackends(), "", setup_.selector);
}

Result<runtime::InformerPtr> Informers::pools() {
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pools,
                       informer(kube::resources::kvCachePools(), "", setup_.selector));
  indexOnce(*pools, kPoolsByBackend, &poolBackends);
  return pools;
}

Result<runtime::InformerPtr> Informers::bindings() {
  KVC_ASSIGN_OR_RETURN(
      runtime::InformerPtr bindings,
      informer(kube::resources::kvCachePoolBindings(), setup_.watch_namespace, setup_.selector));
  indexOnce(*bindings, kBindingsByPool, &bindingPool);
  indexOnce(*bindings, kBindingsByDomain, &bindingDomain);
  return bindings;
}

Result<runtime::InformerPtr> Informers::modelDeployments() {
  KVC_ASSIGN_OR_RETURN(
      runtime::InformerPtr deployments,
      informer(kube::resources::modelDeployments(), setup_.watch_namespace, setup_.selector));
  indexOnce(*deployments, kModelDeploymentsByBinding, &modelDeploymentBinding);
  return deployments;
}

Result<runtime::InformerPtr> Informers::heldPods() {
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pods,
                       informer(kube::resources::pods(), setup_.watch_namespace, heldPodSelector(),
                                heldPodProjection()));
  indexOnce(*pods, kPodsByBinding, &podBinding);
  return pods;
}

Result<runtime::InformerPtr> Informers::tenantPolicies() {
  return informer(kube::resources::configMaps(), setup_.operator_namespace,
                  "app.kubernetes.io/component=tenant-quota-policy");
}

Result<runtime::InformerPtr> Informers::settings() {
  return manager_.informerFor(runtime::settingsInformerOptions());
}

Result<runtime::InformerPtr> Informers::storeObjects(const kube::ResourceType& resource) {
  return informer(resource, setup_.operator_namespace, std::string(kStoreSelector));
}

Result<runtime::InformerPtr> Informers::leases() {
  return informer(kube::resources::leases(), setup_.operator_namespace, "");
}

Result<runtime::InformerPtr> Informers::mountFailures() {
  runtime::InformerOptions options;
  options.resource = kube::resources::events();
  options.namespace_name = setup_.operator_namespace;
  options.field_selector = "reason=FailedMount";
  options.transform = runtime::keepFields(
      {"/regarding", "/reason", "/note", "/eventTime", "/series", "/deprecatedLastTimestamp"});
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr events, manager_.informerFor(options));
  indexOnce(*events, kEventsByObject, &eventObject);
  return events;
}

Result<runtime::InformerPtr> Informers::roleWorkloads() {
  return informer(kube::resources::deployments(), setup_.watch_namespace, roleWorkloadSelector());
}

Result<runtime::InformerPtr> Informers::roleServices() {
  return informer(kube::resources::services(), setup_.watch_namespace, roleWorkloadSelector());
}

Result<runtime::InformerPtr> Informers::replicaPods() {
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pods,
                       informer(kube::resources::pods(), setup_.watch_namespace,
                                roleWorkloadSelector(), replicaPodProjection()));
  indexOnce(*pods, kReplicasByDeployment, &replicaDeployment);
  return pods;
}

}  // namespace kvc::controllers::internal
