#include "kvc/controllers/register.h"

#include "kvc/controllers/backend_controller.h"
#include "kvc/controllers/model_deployment_controller.h"
#include "kvc/controllers/pool_controller.h"

namespace kvc::controllers {

Status addControllers(runtime::Manager& manager, ControllerSetup setup) {
  if (!setup.stores) {
    setup.stores = httpAdminClients();
  }
  KVC_RETURN_IF_ERROR(BackendReconciler::setupWithManager(manager, setup));
  KVC_RETURN_IF_ERROR(PoolReconciler::setupWithManager(manager, setup));
  KVC_RETURN_IF_ERROR(ModelDeploymentReconciler::setupWithManager(manager, setup));
  return okStatus();
}

}  // namespace kvc::controllers
