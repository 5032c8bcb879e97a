#pragma once
// Realistic objects for the kube/runtime benchmarks: an LLM-serving Pod as a Deployment of
// vLLM renders it (labels including the injection opt-in, an owner reference, two containers
// with a long launch line, env from the downward API, GPU resources, probes, volumes), its
// Running status, and our Bindings and Pools.

#include <string>

#include "kvc/common/json.h"

namespace kvc::bench {

// `owner` is the uid of the controlling owner. The garbage collector deletes Pods whose owner
// does not exist, so the live benchmark points them at a ConfigMap it creates (same shape of
// reference as a ReplicaSet's).
inline Json realisticPod(const std::string& namespace_name, int i,
                         const std::string& owner_uid = "0b6f4c1e-3f1d-4c8e-9a51-2a4f6f0c9d10",
                         const std::string& owner_kind = "ReplicaSet",
                         const std::string& owner_api_version = "apps/v1") {
  const std::string n = std::to_string(i);
  const std::string name = "llama-3-70b-instruct-7d9f8c6b5-" + n;
  Json env = Json::array();
  for (const auto& [k, v] : std::initializer_list<std::pair<const char*, const char*>>{
           {"HF_HOME", "/models/.cache"},
           {"VLLM_WORKER_MULTIPROC_METHOD", "spawn"},
           {"NCCL_DEBUG", "WARN"},
           {"NCCL_IB_DISABLE", "0"},
           {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
           {"OMP_NUM_THREADS", "8"},
           {"VLLM_LOGGING_LEVEL", "INFO"},
           {"MODEL_ID", "meta-llama/Meta-Llama-3-70B-Instruct"}}) {
    env.push_back({{"name", k}, {"value", v}});
  }
  env.push_back(
      {{"name", "POD_IP"},
       {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "status.podIP"}}}}}});
  env.push_back(
      {{"name", "POD_NAME"},
       {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "metadata.name"}}}}}});
  Json probe = {{"httpGet", {{"path", "/health"}, {"port", 8000}, {"scheme", "HTTP"}}},
                {"initialDelaySeconds", 120},
                {"periodSeconds", 10},
                {"timeoutSeconds", 5},
                {"failureThreshold", 6}};
  Json engine = {
      {"name", "vllm"},
      {"image", "vllm/vllm-openai:v0.8.5"},
      {"imagePullPolicy", "IfNotPresent"},
      {"command", Json::array({"python3", "-m", "vllm.entrypoints.openai.api_server"})},
      {"args",
       Json::array({"--model", "meta-llama/Meta-Llama-3-70B-Instruct", "--tensor-parallel-size",
                    "4", "--max-model-len", "8192", "--gpu-memory-utilization", "0.92", "--port",
                    "8000", "--served-model-name", "llama-3-70b", "--enable-prefix-caching",
                    "--kv-cache-dtype", "fp8"})},
      {"env", env},
      {"ports", Json::array({{{"name", "http"}, {"containerPort", 8000}, {"protocol", "TCP"}}})},
      {"resources",
       {{"requests", {{"cpu", "16"}, {"memory", "200Gi"}, {"nvidia.com/gpu", "4"}}},
        {"limits", {{"cpu", "32"}, {"memory", "240Gi"}, {"nvidia.com/gpu", "4"}}}}},
      {"volumeMounts",
       Json::array({{{"name", "models"}, {"mountPath", "/models"}},
                    {{"name", "dshm"}, {"mountPath", "/dev/shm"}},
                    {{"name", "config"}, {"mountPath", "/etc/vllm"}, {"readOnly", true}}})},
      {"readinessProbe", probe},
      {"livenessProbe", probe},
      {"terminationMessagePath", "/dev/termination-log"},
      {"terminationMessagePolicy", "File"}};
  Json sidecar = {{"name", "metrics-exporter"},
                  {"image", "ghcr.io/example/gpu-exporter:1.4.2"},
                  {"args", Json::array({"--listen=:9400", "--collect-interval=15s"})},
                  {"ports", Json::array({{{"name", "metrics"}, {"containerPort", 9400}}})},
                  {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}}};
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", namespace_name},
        {"labels",
         {{"app.kubernetes.io/name", "llama-3-70b"},
          {"app.kubernetes.io/instance", "llama-3-70b-" + std::to_string(i % 50)},
          {"app.kubernetes.io/component", "engine"},
          {"pod-template-hash", "7d9f8c6b5"},
          {"kvcache.gpustack.ai/inject", "true"},
          {"gpustack.ai/model", "meta-llama-3-70b-instruct"}}},
        {"annotations",
         {{"prometheus.io/scrape", "true"},
          {"prometheus.io/port", "9400"},
          {"gpustack.ai/deployment-revision", "3"}}},
        {"ownerReferences", Json::array({{{"apiVersion", owner_api_version},
                                          {"kind", owner_kind},
                                          {"name", "llama-3-70b-instruct-7d9f8c6b5"},
                                          {"uid", owner_uid},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}})}}},
      {"spec",
       {{"schedulerName", "kvc-bench-unscheduled"},  // nobody schedules them: no churn
        {"containers", Json::array({engine, sidecar})},
        {"volumes",
         Json::array(
             {{{"name", "models"}, {"persistentVolumeClaim", {{"claimName", "model-cache"}}}},
              {{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "32Gi"}}}},
              {{"name", "config"}, {"configMap", {{"name", "vllm-config"}}}}})},
        {"nodeSelector", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}},
        {"tolerations",
         Json::array(
             {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})},
        {"terminationGracePeriodSeconds", 60},
        {"priorityClassName", ""}}}};
}

// A Running status as the kubelet reports it.
inline Json runningStatus(int i) {
  const std::string ip =
      "10.244." + std::to_string((i / 250) % 250) + "." + std::to_string(i % 250 + 2);
  Json conditions = Json::array();
  for (const char* type :
       {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
    conditions.push_back({{"type", type},
                          {"status", "True"},
                          {"lastProbeTime", nullptr},
                          {"lastTransitionTime", "2026-05-01T12:00:00Z"}});
  }
  Json statuses = Json::array();
  for (const auto& [name, image] : std::initializer_list<std::pair<const char*, const char*>>{
           {"metrics-exporter", "ghcr.io/example/gpu-exporter:1.4.2"},
           {"vllm", "vllm/vllm-openai:v0.8.5"}}) {
    statuses.push_back({{"name", name},
                        {"image", image},
                        {"imageID", std::string("docker.io/") + image +
                                        "@sha256:9f86d081884c7d659a2feaa0c55ad015"
                                        "a3bf4f1b2b0b822cd15d6c15b0f00a08"},
                        {"containerID",
                         "containerd://4e07408562bedb8b60ce05c1decfe3ad16b72230967de01f640b7e"
                         "4729b49fce"},
                        {"ready", true},
                        {"started", true},
                        {"restartCount", 0},
                        {"state", {{"running", {{"startedAt", "2026-05-01T12:00:05Z"}}}}}});
  }
  return Json{{"status",
               {{"phase", "Running"},
                {"conditions", conditions},
                {"hostIP", "192.168.10." + std::to_string(i % 200 + 10)},
                {"podIP", ip},
                {"podIPs", Json::array({{{"ip", ip}}})},
                {"startTime", "2026-05-01T12:00:00Z"},
                {"qosClass", "Burstable"},
                {"containerStatuses", statuses}}}};
}

inline Json benchBinding(const std::string& namespace_name, int i) {
  return Json{
      {"apiVersion", "worker.gpustack.ai/v1"},
      {"kind", "KVCachePoolBinding"},
      {"metadata", {{"name", "binding-" + std::to_string(i)}, {"namespace", namespace_name}}},
      {"spec",
       {{"poolRef", {{"name", "pool-" + std::to_string(i % 100)}}},
        {"quota", {{"ceiling", "64Gi"}}},
        {"domain", {{"name", "llama-3-70b"}, {"blockSize", 16}, {"dtype", "fp8"}}}}}};
}

inline Json benchPool(const std::string& prefix, int i) {
  return Json{
      {"apiVersion", "worker.gpustack.ai/v1"},
      {"kind", "KVCachePool"},
      {"metadata", {{"name", prefix + "pool-" + std::to_string(i)}}},
      {"spec", {{"backends", Json::array({"mooncake-dram"})}, {"quota", {{"total", "2Ti"}}}}}};
}

}  // namespace kvc::bench
