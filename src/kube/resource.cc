#include "kvc/kube/resource.h"

namespace kvc::kube {

std::string ResourceType::apiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourceType::qualifiedName() const {
  return group.empty() ? plural : plural + "." + group;
}

namespace resources {
namespace {

ResourceType make(std::string group, std::string version, std::string kind, std::string plural,
                  bool namespaced) {
  return ResourceType{std::move(group), std::move(version), std::move(kind), std::move(plural),
                      namespaced};
}

}  // namespace

#define KVC_RESOURCE(fn, group, version, kind, plural, namespaced)                \
  const ResourceType& fn() {                                                      \
    static const ResourceType r = make(group, version, kind, plural, namespaced); \
    return r;                                                                     \
  }

KVC_RESOURCE(kvCacheBackends, "worker.gpustack.ai", "v1", "KVCacheBackend", "kvcachebackends",
             false)
KVC_RESOURCE(kvCachePools, "worker.gpustack.ai", "v1", "KVCachePool", "kvcachepools", false)
KVC_RESOURCE(kvCachePoolBindings, "worker.gpustack.ai", "v1", "KVCachePoolBinding",
             "kvcachepoolbindings", true)
KVC_RESOURCE(modelDeployments, "worker.gpustack.ai", "v1", "ModelDeployment", "modeldeployments",
             true)
KVC_RESOURCE(pods, "", "v1", "Pod", "pods", true)
KVC_RESOURCE(configMaps, "", "v1", "ConfigMap", "configmaps", true)
KVC_RESOURCE(secrets, "", "v1", "Secret", "secrets", true)
KVC_RESOURCE(services, "", "v1", "Service", "services", true)
KVC_RESOURCE(serviceAccounts, "", "v1", "ServiceAccount", "serviceaccounts", true)
KVC_RESOURCE(namespaces, "", "v1", "Namespace", "namespaces", false)
KVC_RESOURCE(nodes, "", "v1", "Node", "nodes", false)
KVC_RESOURCE(events, "events.k8s.io", "v1", "Event", "events", true)
KVC_RESOURCE(leases, "coordination.k8s.io", "v1", "Lease", "leases", true)
KVC_RESOURCE(deployments, "apps", "v1", "Deployment", "deployments", true)
KVC_RESOURCE(daemonSets, "apps", "v1", "DaemonSet", "daemonsets", true)
KVC_RESOURCE(statefulSets, "apps", "v1", "StatefulSet", "statefulsets", true)
KVC_RESOURCE(networkPolicies, "networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", true)
KVC_RESOURCE(roles, "rbac.authorization.k8s.io", "v1", "Role", "roles", true)
KVC_RESOURCE(roleBindings, "rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true)
KVC_RESOURCE(clusterRoles, "rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false)
KVC_RESOURCE(clusterRoleBindings, "rbac.authorization.k8s.io", "v1", "ClusterRoleBinding",
             "clusterrolebindings", false)
KVC_RESOURCE(customResourceDefinitions, "apiextensions.k8s.io", "v1", "CustomResourceDefinition",
             "customresourcedefinitions", false)
KVC_RESOURCE(mutatingWebhookConfigurations, "admissionregistration.k8s.io", "v1",
             "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false)
KVC_RESOURCE(validatingWebhookConfigurations, "admissionregistration.k8s.io", "v1",
             "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false)

#undef KVC_RESOURCE

const std::vector<ResourceType>& all() {
  static const std::vector<ResourceType> kTable = {
      kvCacheBackends(),
      kvCachePools(),
      kvCachePoolBindings(),
      modelDeployments(),
      pods(),
      configMaps(),
      secrets(),
      services(),
      serviceAccounts(),
      namespaces(),
      nodes(),
      events(),
      leases(),
      deployments(),
      daemonSets(),
      statefulSets(),
      networkPolicies(),
      roles(),
      roleBindings(),
      clusterRoles(),
      clusterRoleBindings(),
      customResourceDefinitions(),
      mutatingWebhookConfigurations(),
      validatingWebhookConfigurations(),
  };
  return kTable;
}

}  // namespace resources

const ResourceType* findResource(std::string_view api_version, std::string_view kind) {
  for (const ResourceType& r : resources::all()) {
    if (r.kind == kind && r.apiVersion() == api_version) {
      return &r;
    }
  }
  return nullptr;
}

}  // namespace kvc::kube
