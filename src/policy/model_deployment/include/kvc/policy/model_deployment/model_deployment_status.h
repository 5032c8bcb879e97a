#pragma once
// A ModelDeployment's status (contract §8; the walkthrough's Step 3 reads CacheAttached "from the
// deployment's own status rather than from the Pods"). Pure: what the controller resolved,
// rendered and observed in, the whole status out; the controller gathers the facts, writes the
// result through the status subresource and records the Events. docs/model-deployment.md
// ("Status") has the same rules for users.
//
// status.kvCache   with spec.kvCache and the Binding found: binding and domain{name, blockSize,
//                  dtype} from the Binding's spec; pool only once the resolution reached the pool
//                  (a Resolution, or a refusal past the pool). Absent otherwise — never written
//                  with empty strings or zeros ("absent is not zero").
// status.roles[]   one per spec.roles[], in spec order: name, kind; replicas (the Deployment's
//                  status.replicas: Pods of the role, any template), readyReplicas and
//                  updatedReplicas from the live Deployment `<md>-<role>`, absent while it does
//                  not exist or its controller has not reported (status.observedGeneration
//                  unset); unmanaged: true only for a role with roles[].command.
// status.endpoint  the address the controller passes (ModelDeploymentFacts::endpoint), verbatim:
//                  `<md>.<ns>.svc:8000` while the Service that fronts an all-Server deployment
//                  exists (model_deployment_endpoint.h); absent otherwise (a prefill/decode split
//                  is entered through its router, which is not offered yet).
// observedGeneration  `generation` (the status writer stamps the same).
//
// Conditions (lastTransitionTime kept while the status does not flip; setConditions):
//   DomainRegistered  with spec.kvCache only. From the Binding's own conditions: False
//                     BindingNotFound, BindingDeleting, DomainContested (its DomainExclusive is
//                     False), DomainNotRegistered (its QuotaGranted is False/NoLedgerEntry);
//                     Unknown NotObserved (no QuotaGranted yet, or Unknown); True NoTenantLedger
//                     (QuotaGranted True/Unenforced: a declared single-tenant store, nothing to
//                     register); True Registered otherwise.
//   QuotaReserved     with spec.kvCache only. BindingNotFound, BindingDeleting, DomainContested
//                     as above; then the Binding's QuotaGranted: True Granted (the figure from its
//                     status.effectiveQuota), True Unenforced, False ZeroGranted, False
//                     DomainNotRegistered (NoLedgerEntry), Unknown GrantNotExported, Unknown
//                     NotObserved (absent); another reason is mirrored with its status.
//   CacheAttached     with spec.kvCache only; the first that applies:
//                     Unknown Unmanaged   every role sets roles[].command (§8): the operator
//                                         renders nothing and cannot tell;
//                     False RenderFailed  nothing rendered this pass (render_error);
//                     False BindingNotFound, BindingDeleting, PoolNotFound, LedgerNotAvailable,
//                           BackendNotFound, PoolUnreachable (no status.clientEndpoint),
//                           TransportUnsupported, BindingNotResolved: why the resolution gave
//                           the roles no connector;
//                     False NotAttached   a managed role rendered without a connector anyway;
//                     False DomainNotRegistered  connectors rendered, but DomainRegistered is
//                                         False (the master refuses writes under the domain);
//                     False NotApplied    a managed role's live Deployment is missing or does not
//                                         carry the rendered Pod-spec hash yet;
//                     True Attached       every managed role is rendered with a connector to a
//                                         pool with a client endpoint, and applied. Roles with
//                                         roles[].command are named and not judged.
//                     Only a rendered connector is ever reported True (§8 "Unreachable pool").
//   ReplicasUpToDate  Unknown RenderFailed (which template is current is not known); False
//                     NotApplied (a Deployment missing, its Pod-spec hash not the rendered one,
//                     or its spec.replicas not roles[].replicas); False RolloutInProgress (its
//                     controller has not observed its generation, fewer updatedReplicas than
//                     roles[].replicas, or Pods of an older template left); True UpToDate.
//                     Every role counts, unmanaged ones too (their Deployment is rendered).
//   RoleKindsReady    False KindNotReady: a kind present in spec.roles (Server, Prefill,
//                     Decode) has no ready replica in any of its roles; True KindsReady.
//   KVEventsPublishing and RouterReady are not written: neither a KV events publisher nor a
//   router is offered yet (admission refuses spec.router). A condition of another type is kept.
//
// Phase (every phase carries a phaseMessage), first match:
//   Deleting  metadata.deletionTimestamp is set. The conditions and status.kvCache stay as last
//             written (nothing is rendered any more); status.roles[] is refreshed.
//   Degraded  a fault: ReplicasUpToDate Unknown/RenderFailed, CacheAttached False (any reason but
//             NotApplied, which is a rollout step), DomainRegistered False or QuotaReserved False.
//             The message is that condition's.
//   Ready     every role has readyReplicas >= roles[].replicas and ReplicasUpToDate is True.
//             Unknown cache conditions (a Binding not reconciled yet) do not hold Ready back.
//   Starting  ReplicasUpToDate is not True: creating, or rolling out after an edit.
//   Degraded  replicas lost after Ready: a role has fewer ready replicas than roles[].replicas,
//             and either the previous phase was Ready and some role has fewer ready replicas
//             than the previous status.roles[] reported, or the previous phase was this Degraded
//             (a previous Degraded without a fault condition). Scaling up is not a loss.
//   Starting  otherwise: replicas not ready yet.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/binding.h"
#include "kvc/api/model_deployment.h"
#include "kvc/api/reference.h"
#include "kvc/common/json.h"
#include "kvc/policy/inject/refusal.h"
#include "kvc/policy/inject/resolve.h"

namespace kvc::policy {

// The live Deployment `<md>-<role>` as read from the informer cache (observeRoleDeployment).
struct RoleDeploymentObservation {
  std::int64_t generation = 0;                      // metadata.generation
  std::optional<std::int64_t> observed_generation;  // status.observedGeneration
  std::int64_t spec_replicas = 1;                   // spec.replicas (Kubernetes defaults 1)
  // Once its controller has reported (observedGeneration set), a count the DeploymentStatus
  // omits is an observed 0 (the API omits zero counts); before that every count is nullopt.
  std::optional<std::int64_t> replicas;
  std::optional<std::int64_t> updated_replicas;
  std::optional<std::int64_t> ready_replicas;
  std::optional<std::int64_t> available_replicas;
  std::string pod_spec_hash;  // the template's kvcache.gpustack.ai/pod-spec-hash; "" when none
};

RoleDeploymentObservation observeRoleDeployment(const Json& deployment);

struct ModelDeploymentRoleFacts {
  std::string name;  // spec.roles[].name
  // This pass's render of the role (renderModelDeployment): the template's Pod-spec hash, and
  // whether a connector was rendered (RenderedRole::attached). nullopt: not rendered this pass.
  std::optional<std::string> rendered_hash;
  bool attached = false;
  std::optional<RoleDeploymentObservation> deployment;  // nullopt: the Deployment does not exist
};

struct ModelDeploymentFacts {
  // spec, metadata (generation, deletionTimestamp) and the status as last written (its
  // conditions' lastTransitionTime, its phase and status.roles[] for the loss rule).
  api::ModelDeployment deployment;
  // With spec.kvCache: the Binding spec.kvCache.poolRef names (cache, then live); nullopt when
  // it does not exist.
  std::optional<api::KVCachePoolBinding> binding;
  // With the Binding found, resolveBinding's answer the roles were rendered against: the
  // Resolution (an empty master_address is an unreached pool), or the Refusal saying why no
  // connector was rendered. A cluster read error is no answer: the controller retries and
  // writes no status.
  std::optional<Resolution> resolution;
  std::optional<Refusal> refusal;
  // renderModelDeployment failed (it renders every role or none): its message. Nothing was
  // applied this pass; the live Deployments keep their last template.
  std::optional<std::string> render_error;
  std::vector<ModelDeploymentRoleFacts> roles;  // by name; a spec role missing here: no facts
  // Pods of the roles still present, terminating ones included (listed by the selector labels
  // app.kubernetes.io/{name: model-deployment, instance: <md>}); read while deleting.
  std::int64_t pods_left = 0;
  std::string endpoint;  // see status.endpoint above; "" = none
};

// The whole status; conditions set with setConditions at `generation` and `now`.
api::ModelDeployment::Status modelDeploymentStatus(const ModelDeploymentFacts& facts,
                                                   std::int64_t generation, std::string_view now);

// An Event to record on the ModelDeployment.
struct ModelDeploymentEvent {
  std::string type;  // "Normal" | "Warning"
  std::string reason;
  std::string message;

  friend bool operator==(const ModelDeploymentEvent&, const ModelDeploymentEvent&) = default;
};

// The Events a pass records, from the status before and after it: a Warning RenderFailed when
// `after` reports a render failure (ReplicasUpToDate Unknown/RenderFailed) that `before` did not
// report with the same message — once per failure, not once per pass. The other Events of §8
// (ReplicaEvicted, ReplicaLeaving, ReplicaRestarted, RuntimeVersionSkew) need Pod facts and are
// not decided here.
std::vector<ModelDeploymentEvent> modelDeploymentEvents(const api::ModelDeployment::Status& before,
                                                        const api::ModelDeployment::Status& after);

// The Binding's status.usedBy entry for a ModelDeployment: {kind: ModelDeployment, namespace: "",
// name} (contract §5: the Binding is in the same namespace, so the namespace is left empty).
api::ObjectReference bindingUsedByEntry(std::string_view deployment);

// Every role's Deployment is gone and no Pod of the roles is left: nothing writes under the
// Binding's reuse domain any more.
bool workloadsGone(const ModelDeploymentFacts& facts);

// Whether the ModelDeployment holds its Binding (keeps its usedBy entry, so the Binding's
// deletion waits with Releasable=False/HeldByWorkloads): while spec.kvCache is set, unless it is
// being deleted and its workloads are gone. A deleting ModelDeployment keeps its finalizer until
// this is false and the entry is removed.
bool holdsBinding(const ModelDeploymentFacts& facts);

// Adds (hold) or removes (!hold) the entry of `deployment` in a Binding's status.usedBy, kept
// sorted and without duplicates; other entries are left alone. True when the list changed.
bool setBindingUsedBy(std::vector<api::ObjectReference>& used_by, std::string_view deployment,
                      bool hold);

}  // namespace kvc::policy
