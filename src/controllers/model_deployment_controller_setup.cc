// The ModelDeployment controller's wiring: the deployments, their role Deployments, endpoint
// Services and engine Pods in every watched namespace, what a deployment's Binding resolves
// through, and the Settings.
#include <memory>

#include "internal/informers.h"
#include "kvc/controllers/indexes.h"
#include "kvc/controllers/model_deployment_controller.h"
#include "kvc/kube/object.h"
#include "kvc/policy/model_deployment/model_deployment_replicas.h"
#include "kvc/runtime/settings_cache.h"

namespace kvc::controllers {

Status ModelDeploymentReconciler::setupWithManager(runtime::Manager& manager,
                                                   const ControllerSetup& setup) {
  internal::Informers informers(manager, setup);
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr model_deployments, informers.modelDeployments());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr workloads, informers.roleWorkloads());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr endpoint_services, informers.roleServices());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr replica_pods, informers.replicaPods());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr bindings, informers.bindings());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pools, informers.pools());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr backends, informers.backends());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr settings, informers.settings());

  // A replica's eviction, departure or restart is said once, as its Pod changes; informers run
  // on standbys too (their caches are warm at a takeover), so only the leader records.
  const runtime::Cache* md_cache = &model_deployments->cache();
  runtime::EventHandler replica_events;
  replica_events.on_update = [&manager, md_cache](const runtime::ObjectPtr& before,
                                                  const runtime::ObjectPtr& after) {
    if (manager.isLeader()) {
      recordReplicaTransition(*md_cache, manager.events(), *before, *after);
    }
  };
  replica_pods->addEventHandler(std::move(replica_events));

  ModelDeploymentControllerConfig config;
  config.client = manager.client();
  config.deployments = md_cache;
  config.workloads = &workloads->cache();
  config.services = &endpoint_services->cache();
  config.replicas = &replica_pods->cache();
  config.bindings = &bindings->cache();
  config.pools = &pools->cache();
  config.backends = &backends->cache();
  std::shared_ptr<const runtime::SettingsCache> settings_cache =
      setup.settings ? setup.settings : std::make_shared<runtime::SettingsCache>(settings->cache());
  config.settings = [settings_cache] { return settings_cache->current(); };
  config.events = &manager.events();
  config.metrics = &manager.metrics();
  runtime::ControllerOptions options;
  options.name = std::string(kModelDeploymentControllerName);
  options.workers = setup.workers;
  options.metrics = &manager.metrics();
  auto controller = std::make_shared<runtime::Controller>(
      std::move(options), std::make_shared<ModelDeploymentReconciler>(std::move(config)));

  controller->watch(*model_deployments, &runtime::requestForObject,
                    &runtime::specOrLifecycleChanged);
  controller->watch(*workloads, runtime::requestForOwner(kube::resources::modelDeployments()),
                    &runtime::anyChange);
  controller->watch(*endpoint_services,
                    runtime::requestForOwner(kube::resources::modelDeployments()),
                    &runtime::specOrLifecycleChanged);
  // An engine Pod's update passes its deployment again only when it moves what
  // RuntimeVersionSkew reads.
  controller->watch(
      *replica_pods,
      [](const Json& pod) {
        std::vector<runtime::Request> out;
        for (const std::string& key : replicaDeployment(pod)) {
          out.push_back(runtime::Request::fromKey(key));
        }
        return out;
      },
      &policy::skewInputsChanged);
  // The deployments attached through a Binding (its key "<namespace>/<name>").
  auto attached_to = [md_cache](const std::string& binding_key,
                                std::vector<runtime::Request>& out) {
    for (const runtime::ObjectPtr& md :
         md_cache->byIndex(kModelDeploymentsByBinding, binding_key)) {
      out.push_back({kube::object::namespaceName(*md), kube::object::name(*md)});
    }
  };
  const runtime::Cache* binding_cache = &bindings->cache();
  const runtime::Cache* pool_cache = &pools->cache();
  controller->watch(*bindings, [attached_to](const Json& binding) {
    std::vector<runtime::Request> out;
    attached_to(kube::object::key(binding), out);
    return out;
  });
  controller->watch(*pools, [attached_to, binding_cache](const Json& pool) {
    std::vector<runtime::Request> out;
    for (const runtime::ObjectPtr& binding :
         binding_cache->byIndex(kBindingsByPool, kube::object::name(pool))) {
      attached_to(kube::object::key(*binding), out);
    }
    return out;
  });
  controller->watch(
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
  // Every deployment: the dtype Setting is rendered onto every pool-attached role.
  controller->watch(*settings, [md_cache](const Json&) {
    std::vector<runtime::Request> out;
    for (const runtime::ObjectPtr& md : md_cache->list()) {
      out.push_back({kube::object::namespaceName(*md), kube::object::name(*md)});
    }
    return out;
  });
  manager.addController(controller);
  return okStatus();
}

}  // namespace kvc::controllers
