#pragma once
// Wires the controllers into a manager: the shared informers (with the indexes and projections
// of indexes.h), the watches that map events onto the reconciled keys, and the controllers
// themselves. The manager then runs them on the Lease holder.
//
//   KVCacheBackend controller   watches backends (spec and lifecycle changes, usedBy); the
//                               managed store's Deployments, DaemonSets, Pods, Services,
//                               ServiceAccounts, Roles and RoleBindings in the operator
//                               namespace (mapped by their instance label); the Leases
//                               `<b>-leader` (a new holder); the Settings ConfigMap (every
//                               backend: kv-cache-backend-image)
//   KVCachePool controller      watches pools; Bindings (mapped to their pool); backends
//                               (mapped to the pools naming them); labelled Pods (mapped to
//                               their Binding's pool while that Binding is deleting)
//   ModelDeployment controller  watches ModelDeployments (spec and lifecycle); their role
//                               Deployments and endpoint Services (by owner); Bindings, pools and backends (mapped
//                               through the Binding a deployment names); the Settings (every
//                               deployment: the dtype Setting)

#include <string>

#include "kvc/common/status.h"
#include "kvc/controllers/store_access.h"
#include "kvc/runtime/manager.h"

namespace kvc::controllers {

struct ControllerSetup {
  // Only objects of our kinds whose labels match this selector are reconciled ("" = all):
  // lets several operators (or a test's) share one cluster, each with its own objects.
  std::string selector;
  // Only this namespace's Bindings and Pods ("" = every namespace).
  std::string watch_namespace;
  std::string operator_namespace = "gpustack-system";
  int workers = 2;
  AdminClientFactory stores;  // default: httpAdminClients()
};

Status addControllers(runtime::Manager& manager, ControllerSetup setup);

}  // namespace kvc::controllers
