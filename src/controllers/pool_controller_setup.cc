// The pool controller's wiring: what it watches, how each event maps onto the pools it
// reconciles, and which updates are worth a pass.
#include <memory>

#include "internal/engine_counters.h"
#include "internal/informers.h"
#include "internal/store_objects.h"
#include "kvc/controllers/indexes.h"
#include "kvc/controllers/pool_controller.h"
#include "kvc/kube/object.h"
#include "kvc/policy/store/pod_faults.h"
#include "kvc/runtime/settings_cache.h"

namespace kvc::controllers {
namespace {

// A Binding's pool.
std::vector<runtime::Request> poolOfBinding(const Json& binding) {
  std::vector<runtime::Request> out;
  for (const std::string& pool : bindingPool(binding)) {
    out.push_back({"", pool});
  }
  return out;
}

// The pools on a backend.
std::vector<runtime::Request> poolsOnBackend(const runtime::Cache& pools,
                                             const std::string& backend) {
  std::vector<runtime::Request> out;
  for (const runtime::ObjectPtr& pool : pools.byIndex(kPoolsByBackend, backend)) {
    out.push_back({"", kube::object::name(*pool)});
  }
  return out;
}

// A store Pod that has just turned Ready (the map keeps a leader's). After a failover the new
// master serves the ledger its launcher read from the policy ConfigMap on winning the Lease (or,
// when it could not read it, the copy its Pod took at start): what changed meanwhile — a
// Binding deleted or created while no master served — and the Bindings' grants are brought up to
// date by a pass right away, where nothing else would bring one before the resync (the backend's
// spec and endpoints do not change).
bool turnedReady(const Json& old_pod, const Json& new_pod) {
  return policy::podReady(new_pod) && !policy::podReady(old_pod);
}

// The engine counter reader over both kinds of engine Pods, sharing the pool controller's caches;
// its book is what the pool passes read.
std::shared_ptr<const internal::EngineCounterBook> addEngineCounterReader(
    runtime::Manager& manager, const ControllerSetup& setup,
    const internal::EnginePodSources& sources, runtime::Informer& held_pods,
    runtime::Informer& replica_pods, std::function<api::Settings()> settings,
    Clock::Duration resync) {
  internal::EngineCounterReaderConfig config;
  config.sources = sources;
  config.book = std::make_shared<internal::EngineCounterBook>();
  config.http = store::newCurlTransport();
  config.settings = std::move(settings);
  config.resync = resync;
  std::shared_ptr<const internal::EngineCounterBook> book = config.book;
  runtime::ControllerOptions options;
  options.name = std::string(kEngineCounterReaderName);
  // Reads are short and bounded (kEngineReadTimeout); several workers keep one Pod that does
  // not answer from delaying the others.
  options.workers = std::max(4, setup.workers);
  options.metrics = &manager.metrics();
  auto controller = std::make_shared<runtime::Controller>(
      std::move(options), std::make_shared<internal::EngineCounterReader>(std::move(config)));
  // Every event: the reader itself keeps to one read per Pod per resync.
  controller->watch(held_pods);
  controller->watch(replica_pods);
  manager.addController(controller);
  return book;
}

}  // namespace

Status PoolReconciler::setupWithManager(runtime::Manager& manager, const ControllerSetup& setup) {
  internal::Informers informers(manager, setup);
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pools, informers.pools());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr bindings, informers.bindings());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr backends, informers.backends());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pods, informers.heldPods());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr config_maps, informers.tenantPolicies());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr model_deployments, informers.modelDeployments());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr settings, informers.settings());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr store_pods,
                       informers.storeObjects(kube::resources::pods()));
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr replica_pods, informers.replicaPods());

  PoolControllerConfig config;
  config.client = manager.client();
  config.pools = &pools->cache();
  config.bindings = &bindings->cache();
  config.backends = &backends->cache();
  config.pods = &pods->cache();
  config.config_maps = &config_maps->cache();
  config.model_deployments = &model_deployments->cache();
  config.stores = setup.stores ? setup.stores : httpAdminClients();
  std::shared_ptr<const runtime::SettingsCache> settings_cache =
      setup.settings ? setup.settings : std::make_shared<runtime::SettingsCache>(settings->cache());
  config.settings = [settings_cache] { return settings_cache->current(); };
  config.leading_until = setup.leading_until;
  config.operator_namespace = setup.operator_namespace;
  config.metrics = &manager.metrics();
  config.replica_pods = &replica_pods->cache();
  config.events = &manager.events();
  config.engine_counters = addEngineCounterReader(
      manager, setup,
      internal::EnginePodSources{config.pods, config.model_deployments, config.replica_pods}, *pods,
      *replica_pods, config.settings, config.resync);
  config.ripple = std::make_shared<runtime::Trigger>();
  runtime::ControllerOptions options;
  options.name = std::string(kPoolControllerName);
  options.workers = setup.workers;
  options.metrics = &manager.metrics();
  options.rate_limiter = poolRateLimiter(config.resync, realClock());
  std::shared_ptr<runtime::Trigger> ripple = config.ripple;
  auto controller = std::make_shared<runtime::Controller>(
      std::move(options), std::make_shared<PoolReconciler>(std::move(config)));

  controller->watch(*pools, &runtime::requestForObject, &runtime::specOrLifecycleChanged);
  // Spec and lifecycle, and the consumers a ModelDeployment writes into status.usedBy (they
  // hold a deleting Binding).
  controller->watch(*bindings, &poolOfBinding, runtime::specLifecycleOrStatusChanged("usedBy"));
  // Spec and lifecycle, and the endpoints its controller publishes.
  const runtime::Cache* pool_cache = &pools->cache();
  controller->watch(
      *backends,
      [pool_cache](const Json& backend) {
        return poolsOnBackend(*pool_cache, kube::object::name(backend));
      },
      runtime::specLifecycleOrStatusChanged("endpoints"));
  // A leader Pod turning Ready: a new master, whose ledger the pools converge at once.
  controller->watch(
      *store_pods,
      [pool_cache](const Json& pod) {
        if (internal::label(pod, internal::kComponentLabel) != "leader") {
          return std::vector<runtime::Request>();
        }
        return poolsOnBackend(*pool_cache, internal::label(pod, internal::kInstanceLabel));
      },
      &turnedReady);
  // A labelled Pod matters while the Binding it names is deleting (it holds the Binding).
  const runtime::Cache* binding_cache = &bindings->cache();
  controller->watch(*pods, [binding_cache](const Json& pod) {
    std::vector<runtime::Request> out;
    for (const std::string& key : podBinding(pod)) {
      runtime::ObjectPtr binding = binding_cache->get(key);
      if (binding && kube::object::isDeleting(*binding)) {
        for (runtime::Request& request : poolOfBinding(*binding)) {
          out.push_back(std::move(request));
        }
      }
    }
    return out;
  });
  // The other pools of the master a pass's ledger writes reached.
  controller->watch(ripple);
  manager.addController(controller);
  return okStatus();
}

}  // namespace kvc::controllers
