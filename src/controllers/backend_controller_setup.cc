// The backend controller's wiring: what it watches, how each event maps onto the backends it
// reconciles, and which updates are worth a pass.
#include <memory>

#include "internal/informers.h"
#include "kvc/controllers/backend_controller.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/settings_cache.h"

namespace kvc::controllers {
namespace {

// A store object's backend: its instance label (the backend is cluster-scoped: keyed by name).
std::vector<runtime::Request> backendOfStoreObject(const Json& object) {
  const std::string instance =
      stringAt(object, {"metadata", "labels", "app.kubernetes.io/instance"});
  if (instance.empty()) {
    return {};
  }
  return {runtime::Request{"", instance}};
}

// A Lease `<b>-leader`'s backend.
std::vector<runtime::Request> backendOfLeaderLease(const Json& lease) {
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
  return stringAt(old_object, {"spec", "holderIdentity"}) !=
         stringAt(new_object, {"spec", "holderIdentity"});
}

}  // namespace

Status BackendReconciler::setupWithManager(runtime::Manager& manager,
                                           const ControllerSetup& setup) {
  internal::Informers informers(manager, setup);
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr backends, informers.backends());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pools, informers.pools());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr config_maps, informers.tenantPolicies());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr settings, informers.settings());
  // The managed store: its workloads, Pods, accounts, Service and NetworkPolicies, and the Leases
  // its leaders hold, in the operator namespace.
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr deployments,
                       informers.storeObjects(kube::resources::deployments()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr daemon_sets,
                       informers.storeObjects(kube::resources::daemonSets()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr store_pods,
                       informers.storeObjects(kube::resources::pods()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr services,
                       informers.storeObjects(kube::resources::services()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr service_accounts,
                       informers.storeObjects(kube::resources::serviceAccounts()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr roles,
                       informers.storeObjects(kube::resources::roles()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr role_bindings,
                       informers.storeObjects(kube::resources::roleBindings()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr network_policies,
                       informers.storeObjects(kube::resources::networkPolicies()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr leases, informers.leases());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr mount_failures, informers.mountFailures());

  BackendControllerConfig config;
  config.client = manager.client();
  config.backends = &backends->cache();
  config.pools = &pools->cache();
  config.stores = setup.stores ? setup.stores : httpAdminClients();
  config.metrics = &manager.metrics();
  config.operator_namespace = setup.operator_namespace;
  config.deployments = &deployments->cache();
  config.daemon_sets = &daemon_sets->cache();
  config.store_pods = &store_pods->cache();
  config.leases = &leases->cache();
  config.mount_failures = &mount_failures->cache();
  for (const auto& [resource, cache] :
       {std::pair{kube::resources::deployments(), &deployments->cache()},
        std::pair{kube::resources::daemonSets(), &daemon_sets->cache()},
        std::pair{kube::resources::services(), &services->cache()},
        std::pair{kube::resources::serviceAccounts(), &service_accounts->cache()},
        std::pair{kube::resources::roles(), &roles->cache()},
        std::pair{kube::resources::roleBindings(), &role_bindings->cache()},
        std::pair{kube::resources::networkPolicies(), &network_policies->cache()},
        std::pair{kube::resources::configMaps(), &config_maps->cache()}}) {
    config.children.push_back({resource, setup.operator_namespace, cache});
  }
  std::shared_ptr<const runtime::SettingsCache> settings_cache =
      setup.settings ? setup.settings : std::make_shared<runtime::SettingsCache>(settings->cache());
  config.settings = [settings_cache] { return settings_cache->current(); };
  config.events = &manager.events();
  runtime::ControllerOptions options;
  options.name = std::string(kBackendControllerName);
  options.workers = setup.workers;
  options.metrics = &manager.metrics();
  auto controller = std::make_shared<runtime::Controller>(
      std::move(options), std::make_shared<BackendReconciler>(std::move(config)));

  // Spec and lifecycle, and the pools that claim it (written into status.usedBy by the pool
  // controller; they decide Deletable).
  controller->watch(*backends, &runtime::requestForObject,
                    runtime::specLifecycleOrStatusChanged("usedBy"));
  for (const runtime::InformerPtr& child :
       {deployments, daemon_sets, store_pods, services, service_accounts, roles, role_bindings,
        network_policies}) {
    controller->watch(*child, &backendOfStoreObject, &runtime::anyChange);
  }
  controller->watch(*leases, &backendOfLeaderLease, &leaseHolderChanged);
  // A member Pod waiting on a mount changes nothing of its own; the kubelet's Event says why.
  const runtime::Cache* pod_cache = &store_pods->cache();
  const std::string store_namespace = setup.operator_namespace;
  controller->watch(*mount_failures, [pod_cache, store_namespace](const Json& event) {
    const runtime::ObjectPtr pod =
        pod_cache->get(store_namespace + "/" + stringAt(event, {"regarding", "name"}));
    return pod ? backendOfStoreObject(*pod) : std::vector<runtime::Request>{};
  });
  // Every backend: one with no image of its own renders from the Setting kv-cache-backend-image.
  const runtime::Cache* backend_cache = &backends->cache();
  controller->watch(*settings, [backend_cache](const Json&) {
    std::vector<runtime::Request> out;
    for (const std::string& name : backend_cache->listKeys()) {
      out.push_back({"", name});
    }
    return out;
  });
  manager.addController(controller);
  return okStatus();
}

}  // namespace kvc::controllers
