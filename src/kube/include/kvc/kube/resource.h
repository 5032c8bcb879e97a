#pragma once
// Where a kind lives in the REST API: group, version, plural and scope (the "discovery" facts a
// request needs), for our four kinds and the core kinds the operator touches.
//
// The table is static because these paths are fixed by the API; discover() in discovery.h reads
// the same facts from a live server, and an integration test proves that the two agree.

#include <string>
#include <string_view>
#include <vector>

namespace kvc::kube {

struct ResourceType {
  std::string group;    // "" for the core group
  std::string version;  // "v1"
  std::string kind;     // "Pod"
  std::string plural;   // "pods"
  bool namespaced = true;

  // "v1" for the core group, "apps/v1" otherwise.
  std::string apiVersion() const;
  // "pods" or "deployments.apps", as kubectl names a resource.
  std::string qualifiedName() const;

  friend bool operator==(const ResourceType&, const ResourceType&) = default;
};

namespace resources {

// worker.gpustack.ai/v1
const ResourceType& kvCacheBackends();      // cluster-scoped
const ResourceType& kvCachePools();         // cluster-scoped
const ResourceType& kvCachePoolBindings();  // namespaced
const ResourceType& modelDeployments();     // namespaced

// core/v1
const ResourceType& pods();
const ResourceType& configMaps();
const ResourceType& secrets();
const ResourceType& services();
const ResourceType& serviceAccounts();
const ResourceType& namespaces();  // cluster-scoped
const ResourceType& nodes();       // cluster-scoped
// events.k8s.io/v1
const ResourceType& events();
// coordination.k8s.io/v1
const ResourceType& leases();
// apps/v1
const ResourceType& deployments();
const ResourceType& daemonSets();
const ResourceType& statefulSets();
// networking.k8s.io/v1
const ResourceType& networkPolicies();
// rbac.authorization.k8s.io/v1
const ResourceType& roles();
const ResourceType& roleBindings();
const ResourceType& clusterRoles();         // cluster-scoped
const ResourceType& clusterRoleBindings();  // cluster-scoped
// apiextensions.k8s.io/v1
const ResourceType& customResourceDefinitions();  // cluster-scoped
// admissionregistration.k8s.io/v1
const ResourceType& mutatingWebhookConfigurations();    // cluster-scoped
const ResourceType& validatingWebhookConfigurations();  // cluster-scoped

// Every entry above.
const std::vector<ResourceType>& all();

}  // namespace resources

// The resource of `kind` in `api_version` ("apps/v1", "Deployment") from the table, or nullptr.
const ResourceType* findResource(std::string_view api_version, std::string_view kind);

}  // namespace kvc::kube
