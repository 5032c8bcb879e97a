#pragma once
// Adds every controller to a manager, each wiring itself (its setupWithManager: its informers,
// indexes, watches and filters, next to its reconciler). The manager then runs them on the
// Lease holder. What each one watches is said in its own header:
//
//   KVCacheBackend controller   backend_controller.h
//   KVCachePool controller      pool_controller.h (pools and their Bindings)
//   ModelDeployment controller  model_deployment_controller.h

#include "kvc/common/status.h"
#include "kvc/controllers/setup.h"
#include "kvc/runtime/manager.h"

namespace kvc::controllers {

Status addControllers(runtime::Manager& manager, ControllerSetup setup);

}  // namespace kvc::controllers
