#include "kvc/controllers/register.h"

#include "internal/counted_admin_client.h"
#include "internal/informers.h"
#include "internal/object_metrics.h"
#include "kvc/controllers/backend_controller.h"
#include "kvc/controllers/model_deployment_controller.h"
#include "kvc/controllers/pool_controller.h"
#include "kvc/controllers/store_access.h"

namespace kvc::controllers {

Status addControllers(runtime::Manager& manager, ControllerSetup setup) {
  if (!setup.settings) {
    internal::Informers informers(manager, setup);
    KVC_ASSIGN_OR_RETURN(runtime::InformerPtr settings, informers.settings());
    setup.settings = std::make_shared<runtime::SettingsCache>(settings->cache());
  }
  if (!setup.leading_until) {
    setup.leading_until = [&manager] { return manager.leadingUntil(); };
  }
  if (!setup.stores) {
    // One keeper for every controller: the certificates are read and renewed in one place.
    StoreCredentialOptions options;
    options.namespace_name = setup.operator_namespace;
    options.metrics_identity = [settings = setup.settings] {
      return settings->current().store_metrics_identity;
    };
    setup.stores = httpAdminClients(
        std::make_shared<StoreCredentialKeeper>(manager.client(), std::move(options)),
        setup.operator_namespace, setup.leading_until);
  }
  setup.stores = internal::countedAdminClients(std::move(setup.stores), manager.metrics());
  KVC_RETURN_IF_ERROR(BackendReconciler::setupWithManager(manager, setup));
  KVC_RETURN_IF_ERROR(PoolReconciler::setupWithManager(manager, setup));
  KVC_RETURN_IF_ERROR(ModelDeploymentReconciler::setupWithManager(manager, setup));
  return internal::addObjectMetrics(manager, setup);
}

}  // namespace kvc::controllers
