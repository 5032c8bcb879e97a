#pragma once
// The informers the controllers read, one accessor each. Every accessor asks the manager, which
// hands every caller of the same (resource, namespace, selectors) the same informer, so two
// controllers reading pools share one cache; the indexes of that cache are added by whichever
// controller asks first (the same definitions, indexes.h, that the webhooks' informers use).

#include <string>

#include "kvc/common/status.h"
#include "kvc/controllers/setup.h"
#include "kvc/kube/resource.h"
#include "kvc/runtime/informer.h"
#include "kvc/runtime/manager.h"

namespace kvc::controllers::internal {

class Informers {
public:
  Informers(runtime::Manager& manager, const ControllerSetup& setup)
      : manager_(manager), setup_(setup) {}

  // Our kinds, filtered by setup.selector (Bindings and ModelDeployments also by namespace).
  Result<runtime::InformerPtr> backends();
  Result<runtime::InformerPtr> pools();             // indexed kPoolsByBackend
  Result<runtime::InformerPtr> bindings();          // indexed kBindingsByPool, kBindingsByDomain
  Result<runtime::InformerPtr> modelDeployments();  // indexed kModelDeploymentsByBinding
  // The labelled Pods that hold Bindings (heldPodProjection), indexed kPodsByBinding.
  Result<runtime::InformerPtr> heldPods();
  // The tenant-quota policy ConfigMaps of the operator namespace.
  Result<runtime::InformerPtr> tenantPolicies();
  // The Settings ConfigMap.
  Result<runtime::InformerPtr> settings();
  // The managed store's objects of one kind in the operator namespace (store_objects.h:
  // kStoreSelector).
  Result<runtime::InformerPtr> storeObjects(const kube::ResourceType& resource);
  // Every Lease of the operator namespace (the store leaders').
  Result<runtime::InformerPtr> leases();
  // The kubelets' FailedMount Events of the operator namespace (events.k8s.io, field selector
  // reason=FailedMount: a member Pod waiting on a mount says nothing else), indexed
  // kEventsByObject. Only their subject, note and times are kept.
  Result<runtime::InformerPtr> mountFailures();
  // What ModelDeployments render, in every watched namespace (roleWorkloadSelector): the role
  // Deployments, the endpoint Services, and the engine Pods (replicaPodProjection, indexed
  // kReplicasByDeployment).
  Result<runtime::InformerPtr> roleWorkloads();
  Result<runtime::InformerPtr> roleServices();
  Result<runtime::InformerPtr> replicaPods();

private:
  Result<runtime::InformerPtr> informer(const kube::ResourceType& resource,
                                        std::string namespace_name, std::string selector,
                                        runtime::Transform transform = runtime::stripTransform());

  runtime::Manager& manager_;
  const ControllerSetup& setup_;
};

}  // namespace kvc::controllers::internal
