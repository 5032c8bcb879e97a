#pragma once
// The engine workloads of a ModelDeployment (contract §8; seed walkthrough Steps 3 and 6): one
// Deployment per role, in the ModelDeployment's namespace, its engine launched directly and, with
// spec.kvCache, attached to the shared cache through the same renderer Pod injection uses
// (render.h), so an engine Pod carries exactly the client configuration the Pod webhook would
// write for the same Binding and engine. docs/model-deployment.md describes what is rendered.
//
// Flow: the controller resolves the Binding as Pod injection does (resolveBinding, with
// modelDeploymentEngine's engine) and passes the Resolution; every role is rendered from it.
// A Binding that does not resolve, or resolves to an empty client endpoint, renders NO connector
// at all (no argument, variable, volume, mount or annotation), and the role reports attached =
// false: a rendered connector is the only thing ever reported as an attached cache.
//
// Per role (names and labels are stable; the controller's applier adds the owner reference and
// the ownership note):
// - Deployment `<md>-<role>`; selector app.kubernetes.io/{name: model-deployment,
//   instance: <md>, component: <role>}, objects and Pods also part-of: gpustack-operator-worker.
//   Replicas from roles[].replicas; a rolling update that never surges (maxSurge 0,
//   maxUnavailable 1), so an update asks for no accelerator beyond the replicas'.
// - Container `engine`: `vllm serve <model> --port P` or `python3 -m sglang.launch_server
//   --model-path <model> --host 0.0.0.0 --port P` (P: the first of roles[].ports, else 8000),
//   then the attachment's arguments, then the role's extraArgs. Env: the attachment's, its
//   defaults and MC_FORCE_TCP=1 on a tcp attachment (each left out where the role's env names
//   it), then the role's env. A readiness probe GET /health on P.
// - roles[].command takes the role over: that command and nothing synthesised (no launch line,
//   no attachment, extraArgs and env ignored); unmanaged = true.
// - Image: roles[].image > spec.engine.image > the formula of engineImage(). Pull policy and pull
//   secrets: the role's, else the Settings image-pull-policy / image-pull-secrets.
// - Resources (limits): roles[].resources.accelerator as nvidia.com/gpu (huawei.com/Ascend910 on
//   vLLM-Ascend); roles[].resources.interface N > 0 as the fabric of the effective transport
//   (the attachment's protocol, else tcp): rdma N = 1 device.gpustack.ai/rdma.shared: 1,
//   N > 1 device.gpustack.ai/rdma: N; efa vpc.amazonaws.com/efa: N; none on other transports
//   (a warning says so).
// - Overlay: privileged, ports, additionalVolumes (volumes `additional-<k>` by position),
//   terminationGracePeriodSeconds; the Setting model-deployment-tcp-tw-reuse sets the sysctl
//   net.ipv4.tcp_tw_reuse=1 on SGLang Prefill Pods.
// - The Pod template carries kvcache.gpustack.ai/pod-spec-hash (podSpecHash of the template, the
//   client-config annotation and the env included), so the replicas roll when the pool's
//   endpoint, the transport or the dtype Setting changes.
//
// Failure modes: InvalidArgument naming the field when the spec cannot be rendered (no image
// anywhere, a role of size > 1, an additional volume with no single source, an engine with no
// runtime for the manufacturer). Nothing is returned unless every role renders.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/model_deployment.h"
#include "kvc/api/settings.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/policy/base/workload_labels.h"
#include "kvc/policy/inject/engine.h"
#include "kvc/policy/inject/render.h"
#include "kvc/policy/inject/resolve.h"

namespace kvc::policy {

inline constexpr std::int64_t kEnginePort = 8000;
inline constexpr std::string_view kEngineContainer = "engine";
// The manufacturer that selects vLLM-Ascend, as on the Pod annotation.
inline constexpr std::string_view kManufacturerAscend = "ascend";

// The accelerator vendor of a ModelDeployment: its annotation kvcache.gpustack.ai/manufacturer,
// the key and value a Pod carries (keys.h), since this cluster has no instance-type catalogue
// to read it from. "" when absent; exactly "ascend" otherwise, or InvalidArgument naming the
// annotation and the fix.
Result<std::string> modelDeploymentManufacturer(const api::ModelDeployment& deployment);

// The runtime of a ModelDeployment: spec.engine.name, with `manufacturer`
// (modelDeploymentManufacturer: "" or "ascend") selecting vLLM-Ascend. InvalidArgument naming
// spec.engine.name for another manufacturer, or ascend on SGLang.
Result<Engine> modelDeploymentEngine(const api::ModelDeployment& deployment,
                                     std::string_view manufacturer);

// The store client's role for a role kind: Server → none (kv_both), Prefill → kv_producer,
// Decode → kv_consumer.
Role storeRole(std::string_view kind);

// The image formula when neither the role nor spec.engine names one:
// vLLM `vllm/vllm-openai:v<version>`, vLLM-Ascend `quay.io/ascend/vllm-ascend:v<version>`,
// SGLang `lmsysorg/sglang:v<version>` (a leading "v" of the version is not doubled).
std::string engineImage(Engine engine, std::string_view version);

// Why roles[].additionalVolumes[k] cannot be rendered (it names no source, or several), or
// nullopt.
std::optional<std::string> volumeSourceProblem(const api::RoleVolume& volume);

// `<md>-<role>`.
std::string roleWorkloadName(std::string_view deployment, std::string_view role);
// The selector labels (name, instance, component) and, with part-of, the object labels.
Json roleSelectorLabels(std::string_view deployment, std::string_view role);
Json roleObjectLabels(std::string_view deployment, std::string_view role);

struct ModelDeploymentInputs {
  // The Binding spec.kvCache names, resolved as Pod injection resolves it; nullopt when it did
  // not resolve (or there is no spec.kvCache). An empty master_address is an unreached pool.
  std::optional<Resolution> binding;
  api::Settings settings;
  std::string manufacturer;  // see modelDeploymentEngine
};

struct RenderedRole {
  std::string name;  // roles[].name
  std::string kind;  // roles[].kind
  Json deployment;
  bool unmanaged = false;                  // roles[].command took the role over
  bool attached = false;                   // a connector was rendered
  std::optional<ClientRender> attachment;  // what the shared renderer returned, when attached
  std::vector<std::string> warnings;       // a request that renders nothing, said out loud
};

Result<std::vector<RenderedRole>> renderModelDeployment(const api::ModelDeployment& deployment,
                                                        const ModelDeploymentInputs& inputs);

}  // namespace kvc::policy
