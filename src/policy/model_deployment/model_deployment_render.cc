#include "kvc/policy/model_deployment/model_deployment_render.h"

#include <algorithm>
#include <array>
#include <span>

#include "kvc/policy/base/text.h"
#include "kvc/policy/inject/flag_spelling.h"
#include "kvc/policy/inject/keys.h"
#include "kvc/policy/store/store_member.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {
namespace {

constexpr std::string_view kHostTierSwitch = "--enable-hierarchical-cache";
constexpr std::string_view kRetractionBackup = "--disaggregation-decode-retraction-backup";
constexpr std::string_view kForceTcp = "MC_FORCE_TCP";

std::string rolePath(std::size_t index) { return "spec.roles[" + std::to_string(index) + "]"; }

// True when a token of `args` spells one of `flags` as the engine's parser reads it.
bool namesAny(const std::vector<std::string>& args, Engine engine,
              std::span<const std::string_view> flags) {
  for (const std::string& token : args) {
    if (spelledFlag(token, engine, flags)) {
      return true;
    }
  }
  return false;
}

bool envNames(const std::vector<api::RoleEnvVar>& env, std::string_view name) {
  for (const api::RoleEnvVar& var : env) {
    if (var.name == name) {
      return true;
    }
  }
  return false;
}

// The engine port: the first TCP port the role declares, else 8000.
std::int64_t enginePort(const api::ModelDeploymentRole& role) {
  for (const api::RolePort& port : role.ports) {
    if (port.protocol == api::kPortProtocolTCP) {
      return port.port;
    }
  }
  return kEnginePort;
}

// The Setting image-pull-secrets: Secret names separated by ',', blanks around each trimmed,
// empty entries dropped.
std::vector<std::string> settingsPullSecrets(const std::string& setting) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= setting.size()) {
    const std::size_t comma = std::min(setting.find(',', start), setting.size());
    std::string name = setting.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) {
      names.push_back(std::move(name));
    }
    start = comma + 1;
  }
  return names;
}

// The fabric limit of `count` interfaces on `protocol` (contract §3.5's resource names), or null.
Json fabricLimits(std::string_view protocol, std::int64_t count) {
  if (protocol == "efa") {
    return {{"vpc.amazonaws.com/efa", std::to_string(count)}};
  }
  if (protocol == "rdma") {
    return count > 1 ? Json{{"device.gpustack.ai/rdma", std::to_string(count)}}
                     : Json{{"device.gpustack.ai/rdma.shared", "1"}};
  }
  return nullptr;
}

// The volumes of roles[].additionalVolumes, `additional-<k>` by position, and their mounts.
Status additionalVolumes(const api::ModelDeploymentRole& role, const std::string& at, Json& volumes,
                         Json& mounts) {
  for (std::size_t k = 0; k < role.additional_volumes.size(); ++k) {
    const api::RoleVolume& v = role.additional_volumes[k];
    const std::string name = "additional-" + std::to_string(k);
    if (auto problem = volumeSourceProblem(v)) {
      return invalidArgument(at + ".additionalVolumes[" + std::to_string(k) + "]: " + *problem);
    }
    Json volume = {{"name", name}};
    if (v.config_map) {
      volume["configMap"] = {{"name", *v.config_map}};
    } else if (v.secret) {
      volume["secret"] = {{"secretName", *v.secret}};
    } else {
      volume["hostPath"] = {{"path", v.host_path->path}};
      if (v.host_path->type) {
        volume["hostPath"]["type"] = *v.host_path->type;
      }
    }
    volumes.push_back(std::move(volume));
    Json mount = {{"name", name}, {"mountPath", v.mount_path}};
    if (v.read_only) {
      mount["readOnly"] = *v.read_only;
    }
    if (v.sub_path) {
      mount["subPath"] = *v.sub_path;
    }
    mounts.push_back(std::move(mount));
  }
  return okStatus();
}

// The launch line of a managed role: command, then the args before the attachment's.
std::pair<Json, Json> launchLine(Engine engine, const std::string& model, std::int64_t port) {
  if (isVLLMFamily(engine)) {
    return {Json::array({"vllm"}), Json::array({"serve", model, "--port", std::to_string(port)})};
  }
  return {
      Json::array({"python3", "-m", "sglang.launch_server"}),
      Json::array({"--model-path", model, "--host", "0.0.0.0", "--port", std::to_string(port)})};
}

class RoleRenderer {
public:
  RoleRenderer(const api::ModelDeployment& deployment, const ModelDeploymentInputs& inputs,
               Engine engine)
      : deployment_(deployment), inputs_(inputs), engine_(engine) {}

  Result<RenderedRole> render(std::size_t index) {
    const api::ModelDeploymentRole& role = deployment_.spec.roles[index];
    const std::string at = rolePath(index);
    RenderedRole out{role.name, role.kind,    Json(), role.command.has_value(),
                     false,     std::nullopt, {}};
    if (role.size != 1) {
      return invalidArgument(at + ".size: " + std::to_string(role.size) +
                             " Pods per serving instance are not offered yet; every role renders "
                             "one Deployment of single-Pod instances (size 1)");
    }
    KVC_ASSIGN_OR_RETURN(std::string image, imageOf(role, at));
    const std::int64_t port = enginePort(role);

    Json container = {{"name", kEngineContainer}, {"image", image}};
    const std::string pull_policy =
        role.image_pull_policy.value_or(inputs_.settings.image_pull_policy);
    if (!pull_policy.empty()) {
      container["imagePullPolicy"] = pull_policy;
    }
    Json volumes = Json::array();
    Json mounts = Json::array();
    Json annotations = Json::object();
    if (role.command) {
      container["command"] = *role.command;  // take-over: nothing synthesised
    } else {
      auto [command, args] = launchLine(engine_, deployment_.spec.model_name, port);
      Json env = Json::array();
      if (attachable()) {
        out.attachment = attach(role, args, env);
        out.attached = true;
        if (out.attachment->volume) {
          volumes.push_back(*out.attachment->volume);
          mounts.push_back(*out.attachment->mount);
          annotations[std::string(kAnnotationClientConfig)] = *out.attachment->client_config;
        }
      }
      for (const std::string& arg : role.extra_args) {
        args.push_back(arg);
      }
      for (const api::RoleEnvVar& var : role.env) {
        env.push_back({{"name", var.name}, {"value", var.value}});
      }
      container["command"] = std::move(command);
      container["args"] = std::move(args);
      if (!env.empty()) {
        container["env"] = std::move(env);
      }
    }
    container["ports"] = ports(role, port);
    if (Json resources = resourcesOf(role, out.warnings, at); !resources.empty()) {
      container["resources"] = std::move(resources);
    }
    if (role.privileged) {
      container["securityContext"] = {{"privileged", *role.privileged}};
    }
    KVC_RETURN_IF_ERROR(additionalVolumes(role, at, volumes, mounts));
    if (!mounts.empty()) {
      container["volumeMounts"] = std::move(mounts);
    }
    if (!role.command) {
      container["readinessProbe"] = {{"httpGet", {{"path", "/health"}, {"port", port}}},
                                     {"periodSeconds", 10},
                                     {"failureThreshold", 3}};
    }
    out.deployment =
        deploymentOf(role, std::move(container), std::move(volumes), std::move(annotations));
    return out;
  }

private:
  bool attachable() const {
    return deployment_.spec.kv_cache && inputs_.binding && !inputs_.binding->master_address.empty();
  }

  Result<std::string> imageOf(const api::ModelDeploymentRole& role, const std::string& at) const {
    if (role.image && !role.image->empty()) {
      return *role.image;
    }
    const api::ModelEngine& engine = deployment_.spec.engine;
    if (engine.image && !engine.image->empty()) {
      return *engine.image;
    }
    if (engine.version && !engine.version->empty()) {
      return engineImage(engine_, *engine.version);
    }
    return invalidArgument("spec.engine.version: role " + inQuotes(role.name) + " (" + at +
                           ") names no image, and neither does spec.engine; set " + at +
                           ".image, spec.engine.image or spec.engine.version");
  }

  // The cache attachment: the shared renderer, then what only a ModelDeployment adds. Appends
  // to the launch line's args and to the (empty) env.
  ClientRender attach(const api::ModelDeploymentRole& role, Json& args, Json& env) const {
    const Resolution& resolution = *inputs_.binding;
    const bool decode = role.kind == api::kRoleKindDecode;
    // The host tier: a role whose own extraArgs names either switch drops the operator's.
    static constexpr std::array<std::string_view, 2> kHostTierFlags{kHostTierSwitch,
                                                                    kRetractionBackup};
    const bool tier_named = namesAny(role.extra_args, engine_, kHostTierFlags);
    ClientRender render = renderClient(engine_, storeRole(role.kind), resolution, inputs_.settings,
                                       !decode && !tier_named);
    for (const std::string& arg : render.args) {
      args.push_back(arg);
    }
    if (engine_ == Engine::SGLang && decode && !tier_named) {
      args.push_back(kRetractionBackup);
      args.push_back("cpu_tensor");
    }
    for (const EnvVar& var : render.env) {
      env.push_back(var.toJson());
    }
    std::vector<EnvVar> defaults = render.env_defaults;
    if (resolution.protocol == "tcp") {
      defaults.push_back({std::string(kForceTcp), "1", ""});
    }
    for (const EnvVar& var : defaults) {
      if (!envNames(role.env, var.name)) {  // the user's value wins
        env.push_back(var.toJson());
      }
    }
    return render;
  }

  static Json ports(const api::ModelDeploymentRole& role, std::int64_t port) {
    Json out = Json::array();
    if (role.ports.empty()) {
      out.push_back({{"name", "http"}, {"containerPort", port}, {"protocol", "TCP"}});
    }
    for (const api::RolePort& p : role.ports) {
      Json entry = Json::object();
      if (p.port == port && p.protocol == api::kPortProtocolTCP) {
        entry["name"] = "http";
      }
      entry["containerPort"] = p.port;
      entry["protocol"] = p.protocol;
      out.push_back(std::move(entry));
    }
    return out;
  }

  Json resourcesOf(const api::ModelDeploymentRole& role, std::vector<std::string>& warnings,
                   const std::string& at) const {
    Json limits = Json::object();
    if (role.resources.accelerator) {
      limits[engine_ == Engine::VLLMAscend ? "huawei.com/Ascend910" : "nvidia.com/gpu"] =
          *role.resources.accelerator;
    }
    const std::int64_t interfaces = role.resources.interface_count.value_or(0);
    if (interfaces > 0) {
      const std::string protocol = attachable() ? inputs_.binding->protocol : std::string("tcp");
      Json fabric = fabricLimits(protocol, interfaces);
      if (fabric.is_null()) {
        warnings.push_back(at + ".resources.interface is " + std::to_string(interfaces) +
                           ", but the effective transport is " + protocol +
                           ", which takes no fabric device: no RDMA or EFA limit is rendered");
      } else {
        limits.update(fabric);
      }
    }
    if (limits.empty()) {
      return Json::object();
    }
    return {{"limits", std::move(limits)}};
  }

  Json deploymentOf(const api::ModelDeploymentRole& role, Json container, Json volumes,
                    Json annotations) const {
    const std::string& md = deployment_.metadata.name;
    Json pod_spec = Json::object();
    if (engine_ == Engine::SGLang && role.kind == api::kRoleKindPrefill &&
        inputs_.settings.tcp_tw_reuse) {
      pod_spec["securityContext"] = {
          {"sysctls", Json::array({{{"name", "net.ipv4.tcp_tw_reuse"}, {"value", "1"}}})}};
    }
    if (role.termination_grace_period_seconds) {
      pod_spec["terminationGracePeriodSeconds"] = *role.termination_grace_period_seconds;
    }
    const std::vector<std::string> secrets =
        role.image_pull_secrets.empty() ? settingsPullSecrets(inputs_.settings.image_pull_secrets)
                                        : role.image_pull_secrets;
    if (!secrets.empty()) {
      Json list = Json::array();
      for (const std::string& name : secrets) {
        list.push_back({{"name", name}});
      }
      pod_spec["imagePullSecrets"] = std::move(list);
    }
    pod_spec["containers"] = Json::array({std::move(container)});
    if (!volumes.empty()) {
      pod_spec["volumes"] = std::move(volumes);
    }
    Json pod_template = {{"metadata", {{"labels", roleObjectLabels(md, role.name)}}}};
    pod_template["metadata"]["annotations"] = std::move(annotations);
    pod_template["spec"] = std::move(pod_spec);
    pod_template["metadata"]["annotations"][std::string(kPodSpecHashAnnotation)] =
        podSpecHash(pod_template);

    return {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata",
             {{"name", roleWorkloadName(md, role.name)},
              {"namespace", deployment_.metadata.namespace_name},
              {"labels", roleObjectLabels(md, role.name)}}},
            {"spec",
             {{"replicas", role.replicas},
              {"selector", {{"matchLabels", roleSelectorLabels(md, role.name)}}},
              {"strategy",
               {{"type", "RollingUpdate"},
                {"rollingUpdate", {{"maxSurge", 0}, {"maxUnavailable", 1}}}}},
              {"template", std::move(pod_template)}}}};
  }

  const api::ModelDeployment& deployment_;
  const ModelDeploymentInputs& inputs_;
  Engine engine_;
};

}  // namespace

Result<std::string> modelDeploymentManufacturer(const api::ModelDeployment& deployment) {
  const auto& annotations = deployment.metadata.annotations;
  const auto found = annotations.find(std::string(kAnnotationManufacturer));
  if (found == annotations.end()) {
    return std::string();
  }
  if (found->second != kManufacturerAscend) {
    return invalidArgument("metadata.annotations[" + std::string(kAnnotationManufacturer) +
                           "]: " + inQuotes(found->second) +
                           " is not a manufacturer this operator knows; only \"ascend\" "
                           "(vLLM-Ascend, with spec.engine.name vLLM) is: set it exactly, or "
                           "remove the annotation for NVIDIA GPUs");
  }
  return found->second;
}

Result<Engine> modelDeploymentEngine(const api::ModelDeployment& deployment,
                                     std::string_view manufacturer) {
  const std::string& name = deployment.spec.engine.name;
  if (name != api::kEngineVLLM && name != api::kEngineSGLang) {
    return invalidArgument("spec.engine.name: " + inQuotes(name) + " is not one of vLLM, SGLang");
  }
  if (manufacturer.empty()) {
    return name == api::kEngineVLLM ? Engine::VLLM : Engine::SGLang;
  }
  if (manufacturer == kManufacturerAscend && name == api::kEngineVLLM) {
    return Engine::VLLMAscend;
  }
  return invalidArgument("spec.engine.name: " + name + " has no runtime for manufacturer " +
                         inQuotes(manufacturer) + " (only vLLM runs on ascend, as vLLM-Ascend)");
}

std::optional<std::string> volumeSourceProblem(const api::RoleVolume& volume) {
  const int sources =
      (volume.config_map ? 1 : 0) + (volume.secret ? 1 : 0) + (volume.host_path ? 1 : 0);
  if (sources == 1) {
    return std::nullopt;
  }
  return "names " + std::to_string(sources) +
         " sources; name exactly one of configMap, secret or hostPath";
}

Role storeRole(std::string_view kind) {
  if (kind == api::kRoleKindPrefill) {
    return Role::Prefill;
  }
  if (kind == api::kRoleKindDecode) {
    return Role::Decode;
  }
  return Role::None;
}

std::string engineImage(Engine engine, std::string_view version) {
  const std::string tag = "v" + std::string(version.starts_with('v') ? version.substr(1) : version);
  switch (engine) {
    case Engine::VLLM:
      return "vllm/vllm-openai:" + tag;
    case Engine::VLLMAscend:
      return "quay.io/ascend/vllm-ascend:" + tag;
    case Engine::SGLang:
      return "lmsysorg/sglang:" + tag;
  }
  return "vllm/vllm-openai:" + tag;
}

std::string roleWorkloadName(std::string_view deployment, std::string_view role) {
  return std::string(deployment) + "-" + std::string(role);
}

Json roleSelectorLabels(std::string_view deployment, std::string_view role) {
  return {{"app.kubernetes.io/name", kModelDeploymentAppName},
          {"app.kubernetes.io/instance", std::string(deployment)},
          {"app.kubernetes.io/component", std::string(role)}};
}

Json roleObjectLabels(std::string_view deployment, std::string_view role) {
  Json labels = roleSelectorLabels(deployment, role);
  labels["app.kubernetes.io/part-of"] = kPartOfWorker;
  return labels;
}

Result<std::vector<RenderedRole>> renderModelDeployment(const api::ModelDeployment& deployment,
                                                        const ModelDeploymentInputs& inputs) {
  KVC_ASSIGN_OR_RETURN(Engine engine, modelDeploymentEngine(deployment, inputs.manufacturer));
  RoleRenderer renderer(deployment, inputs, engine);
  std::vector<RenderedRole> out;
  for (std::size_t i = 0; i < deployment.spec.roles.size(); ++i) {
    KVC_ASSIGN_OR_RETURN(RenderedRole role, renderer.render(i));
    out.push_back(std::move(role));
  }
  return out;
}

}  // namespace kvc::policy
