#include "kvc/controllers/register.h"

#include "kvc/controllers/backend_controller.h"
#include "kvc/controllers/indexes.h"
#include "kvc/controllers/model_deployment_controller.h"
#include "kvc/controllers/pool_controller.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/policy/model_deployment/model_deployment_replicas.h"
#include "kvc/runtime/settings_cache.h"

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

// The managed store's objects and Pods, in the operator namespace.
constexpr const char* kStoreObjects = "app.kubernetes.io/name=kv-cache-backend";

// A store object's backend: its instance label (the backend is cluster-scoped: keyed by name).
std::vector<runtime::Request> requestForStoreObject(const Json& object) {
  const Json labels = object.value(Json::json_pointer("/metadata/labels"), Json::object());
  auto it = labels.find("app.kubernetes.io/instance");
  if (it == labels.end() || !it->is_string() || it->get<std::string>().empty()) {
    return {};
  }
  return {runtime::Request{"", it->get<std::string>()}};
}

// A Lease `<b>-leader`'s backend.
std::vector<runtime::Request> requestForLeaderLease(const Json& lease) {
  static constexpr std::string_view kSuffix = "-leader";
  const std::string name = kube::object::name(lease);
  if (name.size() <= kSuffix.size() ||
      name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
    return {};
  }
  return {runtime::Request{"", name.substr(0, name.size() - kSuffix.size())}};
}

// A Lease update that moved its holder (renewals every couple of seconds do not matter).
bool leaseHolderChanged(const Json& old_object, const Json& new_object) {
  const Json::json_pointer holder("/spec/holderIdentity");
  return old_object.value(holder, Json()) != new_object.value(holder, Json());
}

}  // namespace

Status addControllers(runtime::Manager& manager, ControllerSetup setup) {
  if (!setup.stores) {
    setup.stores = httpAdminClients();
  }
  auto informer = [&](const kube::ResourceType& resource, std::string ns, std::string selector,
                      runtime::Transform transform =
                          runtime::stripTransform()) -> Result<runtime::InformerPtr> {
    runtime::InformerOptions options;
    options.resource = resource;
    options.namespace_name = std::move(ns);
    options.label_selector = std::move(selector);
    options.transform = std::move(transform);
    return manager.informerFor(options);
  };
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr backends,
                       informer(kube::resources::kvCacheBackends(), "", setup.selector));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pools,
                       informer(kube::resources::kvCachePools(), "", setup.selector));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr bindings,
                       informer(kube::resources::kvCachePoolBindings(), setup.watch_namespace,
                                setup.selector));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pods,
                       informer(kube::resources::pods(), setup.watch_namespace, heldPodSelector(),
                                heldPodProjection()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr config_maps,
                       informer(kube::resources::configMaps(), setup.operator_namespace,
                                "app.kubernetes.io/component=tenant-quota-policy"));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr model_deployments,
                       informer(kube::resources::modelDeployments(), setup.watch_namespace,
                                setup.selector));
  pools->addIndex(kPoolsByBackend, &poolBackends);
  bindings->addIndex(kBindingsByPool, &bindingPool);
  bindings->addIndex(kBindingsByDomain, &bindingDomain);
  pods->addIndex(kPodsByBinding, &podBinding);

  // The managed store: its workloads, Pods, accounts and Service, and the Leases its leaders
  // hold, in the operator namespace; the Settings (kv-cache-backend-image).
  auto store_informer = [&](const kube::ResourceType& resource,
                            std::string selector) -> Result<runtime::InformerPtr> {
    return informer(resource, setup.operator_namespace, std::move(selector));
  };
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr deployments,
                       store_informer(kube::resources::deployments(), kStoreObjects));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr daemon_sets,
                       store_informer(kube::resources::daemonSets(), kStoreObjects));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr store_pods,
                       store_informer(kube::resources::pods(), kStoreObjects));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr services,
                       store_informer(kube::resources::services(), kStoreObjects));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr service_accounts,
                       store_informer(kube::resources::serviceAccounts(), kStoreObjects));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr roles,
                       store_informer(kube::resources::roles(), kStoreObjects));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr role_bindings,
                       store_informer(kube::resources::roleBindings(), kStoreObjects));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr leases,
                       store_informer(kube::resources::leases(), ""));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr settings,
                       manager.informerFor(runtime::settingsInformerOptions()));
  auto settings_cache = std::make_shared<runtime::SettingsCache>(settings->cache());

  // The backend controller.
  BackendControllerConfig backend_config;
  backend_config.client = manager.client();
  backend_config.backends = &backends->cache();
  backend_config.pools = &pools->cache();
  backend_config.stores = setup.stores;
  backend_config.metrics = &manager.metrics();
  backend_config.operator_namespace = setup.operator_namespace;
  backend_config.deployments = &deployments->cache();
  backend_config.daemon_sets = &daemon_sets->cache();
  backend_config.store_pods = &store_pods->cache();
  backend_config.leases = &leases->cache();
  for (const auto& [resource, cache] :
       {std::pair{kube::resources::deployments(), &deployments->cache()},
        std::pair{kube::resources::daemonSets(), &daemon_sets->cache()},
        std::pair{kube::resources::services(), &services->cache()},
        std::pair{kube::resources::serviceAccounts(), &service_accounts->cache()},
        std::pair{kube::resources::roles(), &roles->cache()},
        std::pair{kube::resources::roleBindings(), &role_bindings->cache()},
        std::pair{kube::resources::configMaps(), &config_maps->cache()}}) {
    backend_config.children.push_back({resource, setup.operator_namespace, cache});
  }
  backend_config.settings = [settings_cache] { return settings_cache->current(); };
  backend_config.events = &manager.events();
  runtime::ControllerOptions backend_options;
  backend_options.name = std::string(kBackendControllerName);
  backend_options.workers = setup.workers;
  backend_options.metrics = &manager.metrics();
  auto backend_controller = std::make_shared<runtime::Controller>(
      std::move(backend_options), std::make_shared<BackendReconciler>(backend_config));
  backend_controller->watch(*backends, &runtime::requestForObject, &backendClaimsChanged);
  for (const runtime::InformerPtr& child :
       {deployments, daemon_sets, store_pods, services, service_accounts, roles, role_bindings}) {
    backend_controller->watch(*child, &requestForStoreObject, &runtime::anyChange);
  }
  backend_controller->watch(*leases, &requestForLeaderLease, &leaseHolderChanged);
  const runtime::Cache* backend_cache = &backends->cache();
  backend_controller->watch(*settings, [backend_cache](const Json&) {
    // Every backend: one with no image of its own renders from the Setting.
    std::vector<runtime::Request> out;
    for (const std::string& name : backend_cache->listKeys()) {
      out.push_back({"", name});
    }
    return out;
  });
  manager.addController(backend_controller);

  // The pool controller (pools and their Bindings).
  PoolControllerConfig pool_config;
  pool_config.client = manager.client();
  pool_config.pools = &pools->cache();
  pool_config.bindings = &bindings->cache();
  pool_config.backends = &backends->cache();
  pool_config.pods = &pods->cache();
  pool_config.config_maps = &config_maps->cache();
  pool_config.model_deployments = &model_deployments->cache();
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

  // The ModelDeployment controller: the deployments, their role Deployments in every watched
  // namespace, and what a deployment's Binding resolves through.
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr workloads,
                       informer(kube::resources::deployments(), setup.watch_namespace,
                                roleWorkloadSelector()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr endpoint_services,
                       informer(kube::resources::services(), setup.watch_namespace,
                                roleWorkloadSelector()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr replica_pods,
                       informer(kube::resources::pods(), setup.watch_namespace,
                                roleWorkloadSelector(), replicaPodProjection()));
  model_deployments->addIndex(kModelDeploymentsByBinding, &modelDeploymentBinding);
  replica_pods->addIndex(kReplicasByDeployment, &replicaDeployment);
  // A replica's eviction, departure or restart is said once, as its Pod changes; informers run
  // on standbys too (their caches are warm at a takeover), so only the leader records.
  runtime::EventHandler replica_events;
  replica_events.on_update = [&manager, md_cache = &model_deployments->cache()](
                                 const runtime::ObjectPtr& before, const runtime::ObjectPtr& after) {
    if (manager.isLeader()) {
      recordReplicaTransition(*md_cache, manager.events(), *before, *after);
    }
  };
  replica_pods->addEventHandler(std::move(replica_events));
  ModelDeploymentControllerConfig md_config;
  md_config.client = manager.client();
  md_config.deployments = &model_deployments->cache();
  md_config.workloads = &workloads->cache();
  md_config.services = &endpoint_services->cache();
  md_config.replicas = &replica_pods->cache();
  md_config.bindings = &bindings->cache();
  md_config.pools = &pools->cache();
  md_config.backends = &backends->cache();
  md_config.settings = [settings_cache] { return settings_cache->current(); };
  md_config.events = &manager.events();
  md_config.metrics = &manager.metrics();
  runtime::ControllerOptions md_options;
  md_options.name = std::string(kModelDeploymentControllerName);
  md_options.workers = setup.workers;
  md_options.metrics = &manager.metrics();
  auto md_controller = std::make_shared<runtime::Controller>(
      std::move(md_options), std::make_shared<ModelDeploymentReconciler>(md_config));
  md_controller->watch(*model_deployments, &runtime::requestForObject,
                       &runtime::specOrLifecycleChanged);
  md_controller->watch(*workloads,
                       runtime::requestForOwner(kube::resources::modelDeployments()),
                       &runtime::anyChange);
  md_controller->watch(*endpoint_services,
                       runtime::requestForOwner(kube::resources::modelDeployments()),
                       &runtime::specOrLifecycleChanged);
  md_controller->watch(*replica_pods, [](const Json& pod) {
    std::vector<runtime::Request> out;
    for (const std::string& key : replicaDeployment(pod)) {
      const auto slash = key.find('/');
      out.push_back({key.substr(0, slash), key.substr(slash + 1)});
    }
    return out;
  }, &policy::skewInputsChanged);
  const runtime::Cache* md_cache = &model_deployments->cache();
  // The deployments attached through a Binding (its key "<namespace>/<name>").
  auto attached_to = [md_cache](const std::string& binding_key,
                                std::vector<runtime::Request>& out) {
    for (const runtime::ObjectPtr& md : md_cache->byIndex(kModelDeploymentsByBinding, binding_key)) {
      out.push_back({kube::object::namespaceName(*md), kube::object::name(*md)});
    }
  };
  md_controller->watch(*bindings, [attached_to](const Json& binding) {
    std::vector<runtime::Request> out;
    attached_to(kube::object::key(binding), out);
    return out;
  });
  md_controller->watch(*pools, [attached_to, binding_cache](const Json& pool) {
    std::vector<runtime::Request> out;
    for (const runtime::ObjectPtr& binding :
         binding_cache->byIndex(kBindingsByPool, kube::object::name(pool))) {
      attached_to(kube::object::key(*binding), out);
    }
    return out;
  });
  md_controller->watch(
      *backends,
      [attached_to, binding_cache, pool_cache](const Json& backend) {
        std::vector<runtime::Request> out;
        for (const runtime::ObjectPtr& pool :
             pool_cache->byIndex(kPoolsByBackend, kube::object::name(backend))) {
          for (const runtime::ObjectPtr& binding :
               binding_cache->byIndex(kBindingsByPool, kube::object::name(*pool))) {
            attached_to(kube::object::key(*binding), out);
          }
        }
        return out;
      },
      &runtime::specOrLifecycleChanged);
  md_controller->watch(*settings, [md_cache](const Json&) {
    // Every deployment: the dtype Setting is rendered onto every pool-attached role.
    std::vector<runtime::Request> out;
    for (const runtime::ObjectPtr& md : md_cache->list()) {
      out.push_back({kube::object::namespaceName(*md), kube::object::name(*md)});
    }
    return out;
  });
  manager.addController(md_controller);
  return okStatus();
}

}  // namespace kvc::controllers
