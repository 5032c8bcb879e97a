#include "kvc/controllers/register.h"

#include "kvc/controllers/backend_controller.h"
#include "kvc/controllers/indexes.h"
#include "kvc/controllers/pool_controller.h"
#include "kvc/kube/resource.h"

namespace kvc::controllers {
namespace {

Json statusField(const Json& object, const char* field) {
  auto status = object.find("status");
  if (status == object.end() || !status->is_object()) {
    return Json();
  }
  auto it = status->find(field);
  return it == status->end() ? Json() : *it;
}

// Binding updates that matter to the pool pass: spec and lifecycle, and the consumers a
// ModelDeployment writes into status.usedBy (they hold a deleting Binding).
bool bindingChanged(const Json& old_object, const Json& new_object) {
  return runtime::specOrLifecycleChanged(old_object, new_object) ||
         statusField(old_object, "usedBy") != statusField(new_object, "usedBy");
}

// Backend updates that matter to the backend controller: spec and lifecycle, and the pools that
// claim it (written into status.usedBy by the pool controller; they decide Deletable).
bool backendClaimsChanged(const Json& old_object, const Json& new_object) {
  return runtime::specOrLifecycleChanged(old_object, new_object) ||
         statusField(old_object, "usedBy") != statusField(new_object, "usedBy");
}

// Backend updates that matter to its pools: spec and lifecycle, and the endpoints its controller
// publishes.
bool backendChanged(const Json& old_object, const Json& new_object) {
  return runtime::specOrLifecycleChanged(old_object, new_object) ||
         statusField(old_object, "endpoints") != statusField(new_object, "endpoints");
}

}  // namespace

Status addControllers(runtime::Manager& manager, ControllerSetup setup) {
  if (!setup.stores) {
    setup.stores = httpAdminClients();
  }
  auto informer = [&](const kube::ResourceType& resource, std::string ns,
                      std::string selector) -> Result<runtime::InformerPtr> {
    runtime::InformerOptions options;
    options.resource = resource;
    options.namespace_name = std::move(ns);
    options.label_selector = std::move(selector);
    return manager.informerFor(options);
  };
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr backends,
                       informer(kube::resources::kvCacheBackends(), "", setup.selector));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pools,
                       informer(kube::resources::kvCachePools(), "", setup.selector));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr bindings,
                       informer(kube::resources::kvCachePoolBindings(), setup.watch_namespace,
                                setup.selector));
  runtime::InformerOptions pod_options;
  pod_options.resource = kube::resources::pods();
  pod_options.namespace_name = setup.watch_namespace;
  pod_options.label_selector = heldPodSelector();
  pod_options.transform = heldPodProjection();
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pods, manager.informerFor(pod_options));
  runtime::InformerOptions config_map_options;
  config_map_options.resource = kube::resources::configMaps();
  config_map_options.namespace_name = setup.operator_namespace;
  config_map_options.label_selector = "app.kubernetes.io/component=tenant-quota-policy";
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr config_maps, manager.informerFor(config_map_options));
  pools->addIndex(kPoolsByBackend, &poolBackends);
  bindings->addIndex(kBindingsByPool, &bindingPool);
  bindings->addIndex(kBindingsByDomain, &bindingDomain);
  pods->addIndex(kPodsByBinding, &podBinding);

  // The backend controller.
  BackendControllerConfig backend_config;
  backend_config.client = manager.client();
  backend_config.backends = &backends->cache();
  backend_config.pools = &pools->cache();
  backend_config.stores = setup.stores;
  backend_config.metrics = &manager.metrics();
  runtime::ControllerOptions backend_options;
  backend_options.name = std::string(kBackendControllerName);
  backend_options.workers = setup.workers;
  backend_options.metrics = &manager.metrics();
  auto backend_controller = std::make_shared<runtime::Controller>(
      std::move(backend_options), std::make_shared<BackendReconciler>(backend_config));
  backend_controller->watch(*backends, &runtime::requestForObject, &backendClaimsChanged);
  manager.addController(backend_controller);

  // The pool controller (pools and their Bindings).
  PoolControllerConfig pool_config;
  pool_config.client = manager.client();
  pool_config.pools = &pools->cache();
  pool_config.bindings = &bindings->cache();
  pool_config.backends = &backends->cache();
  pool_config.pods = &pods->cache();
  pool_config.config_maps = &config_maps->cache();
  pool_config.stores = setup.stores;
  pool_config.operator_namespace = setup.operator_namespace;
  pool_config.metrics = &manager.metrics();
  runtime::ControllerOptions pool_options;
  pool_options.name = std::string(kPoolControllerName);
  pool_options.workers = setup.workers;
  pool_options.metrics = &manager.metrics();
  pool_options.rate_limiter = poolRateLimiter(pool_config.resync, realClock());
  auto reconciler_slot = std::make_shared<std::weak_ptr<runtime::Controller>>();
  pool_config.enqueue = [reconciler_slot](const std::string& pool) {
    if (auto controller = reconciler_slot->lock()) {
      controller->enqueue(runtime::Request{"", pool});
    }
  };
  auto pool_controller = std::make_shared<runtime::Controller>(
      std::move(pool_options), std::make_shared<PoolReconciler>(pool_config));
  *reconciler_slot = pool_controller;
  pool_controller->watch(*pools, &runtime::requestForObject, &runtime::specOrLifecycleChanged);
  pool_controller->watch(
      *bindings,
      [](const Json& binding) {
        std::vector<runtime::Request> out;
        for (const std::string& pool : bindingPool(binding)) {
          out.push_back({"", pool});
        }
        return out;
      },
      &bindingChanged);
  const runtime::Cache* pool_cache = &pools->cache();
  pool_controller->watch(
      *backends,
      [pool_cache](const Json& backend) {
        std::vector<runtime::Request> out;
        for (const runtime::ObjectPtr& pool :
             pool_cache->byIndex(kPoolsByBackend, kube::object::name(backend))) {
          out.push_back({"", kube::object::name(*pool)});
        }
        return out;
      },
      &backendChanged);
  const runtime::Cache* binding_cache = &bindings->cache();
  pool_controller->watch(*pods, [binding_cache](const Json& pod) {
    std::vector<runtime::Request> out;
    for (const std::string& key : podBinding(pod)) {
      runtime::ObjectPtr binding = binding_cache->get(key);
      if (binding && kube::object::isDeleting(*binding)) {
        for (const std::string& pool : bindingPool(*binding)) {
          out.push_back({"", pool});
        }
      }
    }
    return out;
  });
  manager.addController(pool_controller);
  return okStatus();
}

}  // namespace kvc::controllers
