#include "kvc/policy/probe/probe_pod.h"

#include "kvc/policy/inject/keys.h"
#include "kvc/policy/store/pod_hardening.h"

namespace kvc::policy {
namespace {

Json envVar(std::string_view name, const std::string& value) {
  return Json{{"name", name}, {"value", value}};
}

Json probeEnv(const ProbePodSpec& spec) {
  const ProbeWorkload& w = spec.workload;
  Json env = Json::array();
  // The vLLM vehicle names no local address: the engine takes its host's, here the Pod's IP.
  env.push_back(
      {{"name", "POD_IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}});
  env.push_back(envVar("KVC_PROBE_ENGINE", std::string(engineRecordName(spec.engine))));
  env.push_back(envVar("KVC_PROBE_REPLICA", std::to_string(spec.replica)));
  if (spec.clean) {
    env.push_back(envVar("KVC_PROBE_MODE", "clean"));
    env.push_back(envVar("KVC_PROBE_REPLICAS", std::to_string(spec.replicas)));
  }
  env.push_back(envVar("KVC_PROBE_SEED", w.seed));
  env.push_back(envVar("KVC_PROBE_MODEL", w.model));
  env.push_back(envVar("KVC_PROBE_PROMPTS", std::to_string(w.prompts)));
  env.push_back(envVar("KVC_PROBE_PREFIX_BLOCKS", std::to_string(w.prefix_blocks)));
  env.push_back(envVar("KVC_PROBE_SUFFIX_BLOCKS", std::to_string(w.suffix_blocks)));
  env.push_back(envVar("KVC_PROBE_BLOCK_TOKENS", std::to_string(w.block_tokens)));
  env.push_back(envVar("KVC_PROBE_BLOCK_BYTES", std::to_string(w.block_bytes)));
  env.push_back(envVar("KVC_PROBE_DEADLINE_SECONDS", std::to_string(w.deadline_seconds)));
  if (w.serve_seconds > 0 && !spec.clean) {
    env.push_back(envVar("KVC_PROBE_SERVE_SECONDS", std::to_string(w.serve_seconds)));
  }
  return env;
}

Json probeContainer(const ProbePodSpec& spec) {
  Json container{
      {"name", "probe"},
      {"image", spec.image},
      {"imagePullPolicy", spec.pull_policy},
      {"command", Json::array({"python3", "-c"})},
      {"args", Json::array({spec.script})},
      {"env", probeEnv(spec)},
      // The store client's own buffer (the vLLM vehicle's local_buffer_size, 128 MiB) and Python.
      {"resources", {{"requests", {{"cpu", "50m"}, {"memory", "256Mi"}}}}},
      {"terminationMessagePath", "/dev/termination-log"},
      {"terminationMessagePolicy", "File"},
      {"securityContext", restrictedContainerSecurityContext()},
      {"volumeMounts", Json::array({{{"name", "tmp"}, {"mountPath", "/tmp"}}})},
  };
  if (spec.workload.serve_seconds > 0 && !spec.clean) {
    // Ready once it serves its counters, as an engine is once its server is up: the operator's
    // reader reads a Pod when it turns Ready.
    const int port = spec.engine == Engine::SGLang ? 30000 : 8000;
    container["ports"] = Json::array({{{"name", "metrics"}, {"containerPort", port}}});
    container["readinessProbe"] = {{"httpGet", {{"path", "/metrics"}, {"port", port}}},
                                   {"periodSeconds", 1}};
  }
  return container;
}

}  // namespace

std::string probePodName(const std::string& run, int replica) {
  return std::string(kProbeAppName) + "-" + run + "-" + std::to_string(replica);
}

std::string probeCleanupPodName(const std::string& run) {
  return std::string(kProbeAppName) + "-" + run + "-clean";
}

Json renderProbePod(const ProbePodSpec& spec) {
  Json pod_spec{
      {"restartPolicy", "Never"},
      // The replica's own deadline, and room to start and to report.
      {"activeDeadlineSeconds", spec.workload.deadline_seconds + spec.workload.serve_seconds + 120},
      {"automountServiceAccountToken", false},
      {"enableServiceLinks", false},
      {"securityContext", leaderPodSecurityContext()},
      {"containers", Json::array({probeContainer(spec)})},
      {"volumes", Json::array({{{"name", "tmp"}, {"emptyDir", Json::object()}}})},
  };
  if (!spec.node_selector.empty()) {
    pod_spec["nodeSelector"] = Json(spec.node_selector);
  }
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", spec.clean ? probeCleanupPodName(spec.run) : probePodName(spec.run, spec.replica)},
        {"namespace", spec.namespace_name},
        {"labels",
         {{"app.kubernetes.io/name", kProbeAppName},
          {"app.kubernetes.io/managed-by", "kvcache"},
          {std::string(kLabelProbeRun), spec.run},
          {std::string(kLabelInject), "true"}}},
        {"annotations",
         {{std::string(kAnnotationBinding), spec.binding},
          {std::string(kAnnotationEngine), std::string(engineDisplayName(spec.engine))},
          {std::string(kAnnotationForwarded), "true"}}}}},
      {"spec", pod_spec},
  };
}

}  // namespace kvc::policy
