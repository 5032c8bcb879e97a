#pragma once
// Validating admission of ModelDeployment (contract §1 "Update rules", §7.3, §8). Pure: the
// webhook's adapter decodes the objects of the review, reads the Setting
// model-deployment-kv-cache-dtype-owned and, on CREATE with spec.kvCache, looks up what the
// Binding leads to (lookUpAttachment); this decides. Every violation is collected, so one refusal
// names them all, each naming the field and the fix.
//
// Rules:
// - Frozen on UPDATE: spec.model.name, spec.engine.name, the annotation
//   kvcache.gpustack.ai/manufacturer (with the engine it selects the runtime), the whole
//   spec.kvCache block (its presence included), the role set (by name), and each role's kind,
//   size, instanceType, resources and command.
// - The manufacturer annotation: absent, or exactly "ascend" (modelDeploymentManufacturer).
// - At most 10 roles; an empty spec.kvCache.poolRef.name; spec.engine.version when a role has no
//   image and spec.engine none; metadata.name longer than 63 characters (it labels the Pods);
//   an additional volume without exactly one source.
// - Not offered yet, refused rather than ignored: spec.router, spec.kvTransfer (the
//   prefill/decode direct transfer leg) and roles[].size > 1. KV events have no field at all.
// - Owned keys while spec.kvCache is set, on a role without command: the flags of §8 in
//   extraArgs in every spelling the engine's parser reads (flag_spelling.h, data/engine-flags),
//   the variables of §8 in env, --kv-cache-dtype while the Setting is on, and on the vLLM family
//   a mount at /etc/gpustack/kvcache. Each refusal names the key, the engine and
//   spec.roles[i].command as the way to take the key over. extraArgs and env of a role with
//   command are ignored by the renderer: a warning says so.
// - A new binding's transport, with the Pod rule (resolve.h matchTransport: mixed protocols
//   refused, vLLM-Ascend needs a group offering CANN). A missing Binding, pool or backend is not
//   refused (the controller reports it; the deployment runs without a cache until it resolves):
//   a warning says so.
// - Pod Security (model_deployment_pod_security.cc): each role is rendered as the controller
//   renders it and its Pod template evaluated (pod_security.h) against the level its namespace's
//   label pod-security.kubernetes.io/enforce sets, since the API server would refuse every Pod of
//   a role that fails it and the role would never run (its ReplicaSet reports FailedCreate). A
//   violation names the role's field that causes it (spec.roles[i].privileged,
//   spec.roles[i].additionalVolumes[k].hostPath; for the sysctl net.ipv4.tcp_tw_reuse of an
//   SGLang Prefill role, the Setting model-deployment-tcp-tw-reuse), the namespace, the level and
//   the fix. Under restricted, what no field can change (the engine Pods run as root, with no
//   seccomp profile, capabilities or allowPrivilegeEscalation set) is said once, on
//   metadata.namespace: the level cannot run this workload.
//
// Update rules: a rule that judges a value the update did not change is skipped, so an object
// admitted under older rules is never stranded; an update that changes neither spec, labels nor
// annotations (a finalizer removal) is never refused. One exception, §8's stored
// --kv-cache-dtype: while the Setting is on, a stored ModelDeployment whose role carries the flag
// keeps running (its own later value wins on the command line), but every other update is
// refused until the flag is removed. Pod Security on UPDATE refuses only a violation the stored
// object's role of the same name did not have already (both judged at today's level and
// Settings), so a namespace labelled after the fact strands nothing.

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "kvc/api/kvcache.h"
#include "kvc/api/model_deployment.h"
#include "kvc/common/status.h"
#include "kvc/policy/base/admission_verdict.h"
#include "kvc/policy/inject/cluster_view.h"

namespace kvc::policy {

inline constexpr std::size_t kMaxModelDeploymentRoles = 10;

// What spec.kvCache.poolRef leads to: the Binding, its pool, the pool's first backend. Each link
// is looked up only when the one before it exists; nullopt: it does not exist.
struct AttachmentLookup {
  std::optional<api::KVCachePoolBinding> binding;
  std::optional<api::KVCachePool> pool;
  std::optional<api::KVCacheBackend> backend;
};

// The lookup through the webhook's ClusterView; a read error is returned as the error, never as
// "does not exist".
Result<AttachmentLookup> lookUpAttachment(const ClusterView& cluster,
                                          std::string_view namespace_name,
                                          std::string_view binding);

struct ModelDeploymentAdmission {
  AdmissionOperation operation = AdmissionOperation::Create;
  api::ModelDeployment deployment;
  std::optional<api::ModelDeployment> old;  // UPDATE: the stored one
  bool dtype_owned = true;                  // the Setting model-deployment-kv-cache-dtype-owned
  bool tcp_tw_reuse = false;                // the Setting model-deployment-tcp-tw-reuse
  // The labels of the deployment's namespace, for its Pod Security level; nullopt: not looked up
  // (no Pod Security check).
  std::optional<std::map<std::string, std::string>> namespace_labels;
  // CREATE with spec.kvCache: the lookup; nullopt: not looked up (no transport check).
  std::optional<AttachmentLookup> attachment;
};

AdmissionVerdict admitModelDeployment(const ModelDeploymentAdmission& request);

}  // namespace kvc::policy
