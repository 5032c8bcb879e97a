#include "kvc/api/model_deployment.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/model_deployment_conditions.h"
#include "kvc/api/phase.h"
#include "kvc/common/yaml.h"

namespace kvc::api {
namespace {

// The document of `kind` in a YAML stream (the test fails when there is none).
Json documentOfKind(std::string_view yaml, std::string_view kind) {
  const auto docs = parseYamlDocuments(yaml);
  EXPECT_TRUE(docs.ok()) << docs.status().message();
  if (!docs.ok()) {
    return Json();
  }
  for (const YamlDocument& doc : *docs) {
    if (doc.value.value("kind", "") == kind) {
      return doc.value;
    }
  }
  ADD_FAILURE() << "no " << kind << " in the stream";
  return Json();
}

Result<ModelDeployment> decodeYaml(std::string_view yaml) {
  return modelDeploymentFromJson(documentOfKind(yaml, kKindModelDeployment));
}

// The error message of decoding `json`, or "" when it decodes.
std::string decodeError(std::string_view json) {
  const auto deployment = modelDeploymentFromJson(Json::parse(json));
  return deployment.ok() ? "" : deployment.status().message();
}

// Walkthrough, Step 3: the workload of team-a.
constexpr std::string_view kStep3 = R"(
apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata:
  name: qwen-chat
  namespace: team-a
spec:
  model:
    name: Qwen/Qwen2.5-7B-Instruct
  engine:
    name: vLLM
    # matches the store version used by the default backend image
    image: gpustack/runner:cuda13.0-vllm0.29.0
  kvCache:
    poolRef:
      name: team-a # KVCachePoolBinding in this namespace
  roles:
  - name: server
    replicas: 2
    instanceType:
    resources:
      accelerator: "1"
)";

// Walkthrough, Step 6: the fp8 Binding and the deployment that uses it.
constexpr std::string_view kStep6 = R"(
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata:
  name: qwen-fp8
  namespace: team-a
spec:
  poolRef:
    name: shared-dram
  quota:
    ceiling: 4Gi
  domain:
    name: qwen-fp8-v1
    blockSize: 16
    dtype: fp8_e4m3
---
apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata:
  name: qwen-chat-fp8
  namespace: team-a
spec:
  model:
    name: Qwen/Qwen2.5-7B-Instruct
  engine:
    name: vLLM
    image: gpustack/runner:cuda13.0-vllm0.29.0
  kvCache:
    poolRef:
      name: qwen-fp8
  roles:
  - name: server
    replicas: 1
    instanceType:
    resources:
      accelerator: "1"
)";

TEST(ModelDeployment, DecodesWalkthroughStep3WithSchemaDefaults) {
  const auto md = decodeYaml(kStep3);
  ASSERT_TRUE(md.ok()) << md.status().message();
  EXPECT_EQ(md->metadata.name, "qwen-chat");
  EXPECT_EQ(md->metadata.namespace_name, "team-a");
  EXPECT_EQ(md->spec.model_name, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(md->spec.engine.name, kEngineVLLM);
  EXPECT_EQ(md->spec.engine.version, std::nullopt);
  EXPECT_EQ(md->spec.engine.image, "gpustack/runner:cuda13.0-vllm0.29.0");
  ASSERT_TRUE(md->spec.kv_cache.has_value());
  EXPECT_EQ(md->spec.kv_cache->pool_ref, "team-a");
  EXPECT_EQ(md->spec.kv_cache->connector, kConnectorMooncake);  // schema default
  EXPECT_EQ(md->spec.kv_transfer_protocol, std::nullopt);
  EXPECT_EQ(md->spec.router, std::nullopt);
  ASSERT_EQ(md->spec.roles.size(), 1u);
  const ModelDeploymentRole& server = md->spec.roles[0];
  EXPECT_EQ(server.name, "server");
  EXPECT_EQ(server.kind, kRoleKindServer);  // schema default
  EXPECT_EQ(server.replicas, 2);
  EXPECT_EQ(server.size, 1);                      // schema default
  EXPECT_EQ(server.instance_type, std::nullopt);  // `instanceType:` is null
  EXPECT_EQ(server.resources.accelerator, "1");
  EXPECT_EQ(server.resources.interface_count, std::nullopt);
  EXPECT_EQ(server.command, std::nullopt);
  EXPECT_TRUE(server.extra_args.empty());
  EXPECT_TRUE(server.env.empty());
  EXPECT_EQ(server.image, std::nullopt);
  EXPECT_EQ(server.privileged, std::nullopt);
  EXPECT_TRUE(server.ports.empty());
  EXPECT_TRUE(server.additional_volumes.empty());
  EXPECT_EQ(server.termination_grace_period_seconds, std::nullopt);
  // No status yet: nothing observed.
  EXPECT_EQ(md->status.observed_generation, 0);
  EXPECT_EQ(md->status.kv_cache, std::nullopt);
  EXPECT_TRUE(md->status.roles.empty());
  EXPECT_EQ(modelDeploymentStatusToJson(md->status), Json::object());
}

TEST(ModelDeployment, DecodesWalkthroughStep6Fp8Deployment) {
  const auto md = decodeYaml(kStep6);
  ASSERT_TRUE(md.ok()) << md.status().message();
  EXPECT_EQ(md->metadata.name, "qwen-chat-fp8");
  EXPECT_EQ(md->metadata.namespace_name, "team-a");
  EXPECT_EQ(md->spec.model_name, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(md->spec.engine.name, kEngineVLLM);
  EXPECT_EQ(md->spec.engine.image, "gpustack/runner:cuda13.0-vllm0.29.0");
  ASSERT_TRUE(md->spec.kv_cache.has_value());
  EXPECT_EQ(md->spec.kv_cache->pool_ref, "qwen-fp8");
  EXPECT_EQ(md->spec.kv_cache->connector, kConnectorMooncake);
  ASSERT_EQ(md->spec.roles.size(), 1u);
  EXPECT_EQ(md->spec.roles[0].name, "server");
  EXPECT_EQ(md->spec.roles[0].kind, kRoleKindServer);
  EXPECT_EQ(md->spec.roles[0].replicas, 1);
  EXPECT_EQ(md->spec.roles[0].size, 1);
  EXPECT_EQ(md->spec.roles[0].instance_type, std::nullopt);
  EXPECT_EQ(md->spec.roles[0].resources.accelerator, "1");
}

TEST(ModelDeployment, DecodesLikeTheObjectReadBackWithDefaults) {
  // The Step 3 manifest as the API server returns it: every schema default written out.
  const auto from_file = decodeYaml(kStep3);
  const auto from_server = modelDeploymentFromJson(Json::parse(R"({
    "apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
    "metadata": {"name": "qwen-chat", "namespace": "team-a", "generation": 1},
    "spec": {"model": {"name": "Qwen/Qwen2.5-7B-Instruct"},
             "engine": {"name": "vLLM", "image": "gpustack/runner:cuda13.0-vllm0.29.0"},
             "kvCache": {"poolRef": {"name": "team-a"}, "connector": "Mooncake"},
             "roles": [{"name": "server", "kind": "Server", "replicas": 2, "size": 1,
                        "instanceType": null, "resources": {"accelerator": "1"}}]}})"));
  ASSERT_TRUE(from_file.ok()) << from_file.status().message();
  ASSERT_TRUE(from_server.ok()) << from_server.status().message();
  EXPECT_EQ(from_file->spec.model_name, from_server->spec.model_name);
  EXPECT_EQ(from_file->spec.engine, from_server->spec.engine);
  EXPECT_EQ(from_file->spec.kv_cache, from_server->spec.kv_cache);
  EXPECT_EQ(from_file->spec.roles, from_server->spec.roles);
}

TEST(ModelDeployment, NoKVCacheBlockMeansNoSharedCache) {
  const auto md = modelDeploymentFromJson(Json::parse(R"({
    "metadata": {"name": "plain", "namespace": "team-a"},
    "spec": {"model": {"name": "m"}, "engine": {"name": "SGLang", "version": "0.5.2"},
             "roles": [{"name": "server"}]}})"));
  ASSERT_TRUE(md.ok()) << md.status().message();
  EXPECT_EQ(md->spec.kv_cache, std::nullopt);
  EXPECT_EQ(md->spec.engine.name, kEngineSGLang);
  EXPECT_EQ(md->spec.engine.version, "0.5.2");
  EXPECT_EQ(md->spec.engine.image, std::nullopt);
  ASSERT_EQ(md->spec.roles.size(), 1u);
  EXPECT_EQ(md->spec.roles[0].replicas, 1);
  EXPECT_EQ(md->spec.roles[0].size, 1);
}

TEST(ModelDeployment, DecodesAPrefillDecodePair) {
  const auto md = decodeYaml(R"(
apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata:
  name: qwen-pd
  namespace: team-a
spec:
  model:
    name: Qwen/Qwen2.5-7B-Instruct
  engine:
    name: vLLM
    version: v0.11.0
  kvCache:
    poolRef:
      name: team-a
  kvTransfer:
    protocol: rdma
  router:
    replicas: 2
    extraArgs: ["--policy", "cache_aware"]
  roles:
  - name: prefill
    kind: Prefill
    replicas: 2
    size: 2
    instanceType: h100x8
    resources:
      accelerator: 4
      interface: 1
    extraArgs: ["--max-num-batched-tokens", "8192"]
  - name: decode
    kind: Decode
    replicas: 3
    instanceType: h100x8
    resources:
      accelerator: "8"
      interface: 0
    env:
    - name: VLLM_LOGGING_LEVEL
      value: DEBUG
)");
  ASSERT_TRUE(md.ok()) << md.status().message();
  EXPECT_EQ(md->spec.engine.version, "v0.11.0");
  EXPECT_EQ(md->spec.kv_transfer_protocol, "rdma");
  ASSERT_TRUE(md->spec.router.has_value());
  EXPECT_EQ(md->spec.router->replicas, 2);
  EXPECT_EQ(md->spec.router->extra_args, (std::vector<std::string>{"--policy", "cache_aware"}));
  ASSERT_EQ(md->spec.roles.size(), 2u);

  const ModelDeploymentRole& prefill = md->spec.roles[0];
  EXPECT_EQ(prefill.name, "prefill");
  EXPECT_EQ(prefill.kind, kRoleKindPrefill);
  EXPECT_EQ(prefill.replicas, 2);
  EXPECT_EQ(prefill.size, 2);
  EXPECT_EQ(prefill.instance_type, "h100x8");
  EXPECT_EQ(prefill.resources.accelerator, "4");  // an integer quantity, as its text
  EXPECT_EQ(prefill.resources.interface_count, 1);
  EXPECT_EQ(prefill.extra_args, (std::vector<std::string>{"--max-num-batched-tokens", "8192"}));
  EXPECT_EQ(prefill.command, std::nullopt);

  const ModelDeploymentRole& decode = md->spec.roles[1];
  EXPECT_EQ(decode.name, "decode");
  EXPECT_EQ(decode.kind, kRoleKindDecode);
  EXPECT_EQ(decode.replicas, 3);
  EXPECT_EQ(decode.size, 1);
  EXPECT_EQ(decode.resources.accelerator, "8");
  EXPECT_EQ(decode.resources.interface_count, 0);  // explicitly zero, not absent
  EXPECT_EQ(decode.env, (std::vector<RoleEnvVar>{{"VLLM_LOGGING_LEVEL", "DEBUG"}}));
}

TEST(ModelDeployment, TakeOverRoleKeepsItsCommand) {
  const auto md = decodeYaml(R"(
apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata:
  name: custom
  namespace: team-a
spec:
  model:
    name: Qwen/Qwen2.5-7B-Instruct
  engine:
    name: SGLang
    image: lmsysorg/sglang:v0.5.2
  kvCache:
    poolRef:
      name: team-a
  roles:
  - name: server
    command:
    - python3
    - -m
    - sglang.launch_server
    - --model-path
    - Qwen/Qwen2.5-7B-Instruct
    - --hicache-storage-backend
    - mooncake
  - name: empty-argv
    command: []
)");
  ASSERT_TRUE(md.ok()) << md.status().message();
  ASSERT_EQ(md->spec.roles.size(), 2u);
  ASSERT_TRUE(md->spec.roles[0].command.has_value());
  EXPECT_EQ(*md->spec.roles[0].command,
            (std::vector<std::string>{"python3", "-m", "sglang.launch_server", "--model-path",
                                      "Qwen/Qwen2.5-7B-Instruct", "--hicache-storage-backend",
                                      "mooncake"}));
  // A present but empty command is still a take-over; only an absent one is not.
  ASSERT_TRUE(md->spec.roles[1].command.has_value());
  EXPECT_TRUE(md->spec.roles[1].command->empty());
}

TEST(ModelDeployment, DecodesThePodOverlay) {
  const auto md = decodeYaml(R"(
apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata:
  name: overlay
  namespace: team-a
spec:
  model:
    name: m
  engine:
    name: vLLM
  roles:
  - name: server
    image: registry.local/vllm:custom
    imagePullPolicy: IfNotPresent
    imagePullSecrets:
    - name: registry-cred
    privileged: false
    ports:
    - port: 8000
    - port: 5557
      protocol: UDP
    additionalVolumes:
    - mountPath: /etc/engine
      readOnly: true
      configMap:
        name: engine-config
    - mountPath: /var/secret
      subPath: token
      secret:
        name: engine-token
    - mountPath: /dev/shm/cache
      hostPath:
        path: /mnt/cache
        type: DirectoryOrCreate
    terminationGracePeriodSeconds: 0
    env:
    - name: EMPTY
)");
  ASSERT_TRUE(md.ok()) << md.status().message();
  const ModelDeploymentRole& role = md->spec.roles.at(0);
  EXPECT_EQ(role.image, "registry.local/vllm:custom");
  EXPECT_EQ(role.image_pull_policy, "IfNotPresent");
  EXPECT_EQ(role.image_pull_secrets, std::vector<std::string>{"registry-cred"});
  EXPECT_EQ(role.privileged, false);
  EXPECT_EQ(role.ports, (std::vector<RolePort>{{8000, "TCP"}, {5557, "UDP"}}));  // TCP default
  ASSERT_EQ(role.additional_volumes.size(), 3u);
  EXPECT_EQ(role.additional_volumes[0], (RoleVolume{"/etc/engine", true, std::nullopt,
                                                    "engine-config", std::nullopt, std::nullopt}));
  EXPECT_EQ(role.additional_volumes[1], (RoleVolume{"/var/secret", std::nullopt, "token",
                                                    std::nullopt, "engine-token", std::nullopt}));
  EXPECT_EQ(role.additional_volumes[2].host_path,
            (RoleHostPath{"/mnt/cache", "DirectoryOrCreate"}));
  EXPECT_EQ(role.termination_grace_period_seconds, 0);  // explicitly zero, not absent
  EXPECT_EQ(role.env, (std::vector<RoleEnvVar>{{"EMPTY", ""}}));
}

TEST(ModelDeployment, WrongTypesNameTheirPath) {
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"roles": [
      {"name": "a"}, {"name": "b", "replicas": "2"}]}})"),
            "spec.roles[1].replicas must be an integer, not string");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"model": {"name": 7}}})"),
            "spec.model.name must be a string, not number");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"kvCache": "team-a"}})"),
            "spec.kvCache must be an object, not string");
  EXPECT_EQ(
      decodeError(R"({"metadata": {"name": "x"}, "spec": {"kvCache": {"poolRef": {"name": 1}}}})"),
      "spec.kvCache.poolRef.name must be a string, not number");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"roles": {"name": "a"}}})"),
            "spec.roles must be a list, not object");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"roles": ["server"]}})"),
            "spec.roles[0] must be an object, not string");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"roles": [
      {"name": "a", "command": ["vllm", 1]}]}})"),
            "spec.roles[0].command[1] must be a string, not number");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"roles": [
      {"name": "a", "extraArgs": "--x"}]}})"),
            "spec.roles[0].extraArgs must be a list, not string");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"roles": [
      {"name": "a", "resources": {"accelerator": true}}]}})"),
            "spec.roles[0].resources.accelerator must be a quantity (a string such as \"8Gi\"), "
            "not boolean");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"roles": [
      {"name": "a", "env": [{"name": "A", "value": 1}]}]}})"),
            "spec.roles[0].env[0].value must be a string, not number");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"roles": [
      {"name": "a", "ports": [{"port": "8000"}]}]}})"),
            "spec.roles[0].ports[0].port must be an integer, not string");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"roles": [
      {"name": "a", "privileged": "true"}]}})"),
            "spec.roles[0].privileged must be a boolean, not string");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "status": {"roles": [
      {"name": "a", "readyReplicas": 1.5}]}})"),
            "status.roles[0].readyReplicas must be an integer, not number");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "status": {"kvCache": {
      "domain": {"blockSize": "16"}}}})"),
            "status.kvCache.domain.blockSize must be an integer, not string");
  EXPECT_EQ(decodeError(R"({"spec": {}})"), "metadata.name is required");
}

TEST(ModelDeployment, RefusesValuesOutsideTheSchemaEnums) {
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"engine": {"name": "vllm"}}})"),
            "spec.engine.name \"vllm\" is not one of vLLM, SGLang");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"roles": [
      {"name": "a", "kind": "prefill"}]}})"),
            "spec.roles[0].kind \"prefill\" is not one of Server, Prefill, Decode");
  EXPECT_EQ(decodeError(R"({"metadata": {"name": "x"}, "spec": {"kvCache": {
      "poolRef": {"name": "b"}, "connector": "LMCache"}}})"),
            "spec.kvCache.connector \"LMCache\" is not one of Mooncake");
}

TEST(ModelDeployment, StatusRoundTrips) {
  // Written in the encoder's key order: Json keeps the order of keys, and == compares it.
  const Json status = Json::parse(R"({
    "observedGeneration": 3,
    "phase": "Degraded",
    "phaseMessage": "role decode: 1/3 replicas ready",
    "conditions": [
      {"type": "CacheAttached", "status": "True", "observedGeneration": 3,
       "lastTransitionTime": "2026-11-29T10:00:00Z", "reason": "Attached",
       "message": "attached to team-a/team-a"},
      {"type": "RoleKindsReady", "status": "False", "observedGeneration": 3,
       "lastTransitionTime": "2026-11-29T10:01:00Z", "reason": "RoleNotReady",
       "message": "decode has 1 of 3 replicas ready"}],
    "endpoint": "qwen-pd.team-a.svc:8000",
    "kvCache": {"binding": "team-a", "pool": "shared-dram",
                "domain": {"name": "default", "blockSize": 64, "dtype": "bfloat16"}},
    "roles": [
      {"name": "prefill", "kind": "Prefill", "replicas": 2, "readyReplicas": 2,
       "updatedReplicas": 2, "unmanaged": false},
      {"name": "decode", "kind": "Decode", "replicas": 3, "readyReplicas": 1,
       "updatedReplicas": 3},
      {"name": "custom", "kind": "Server", "replicas": 1, "unmanaged": true}]})");
  const auto md = modelDeploymentFromJson(
      Json{{"metadata", {{"name", "qwen-pd"}, {"namespace", "team-a"}}}, {"status", status}});
  ASSERT_TRUE(md.ok()) << md.status().message();
  EXPECT_EQ(md->status.observed_generation, 3);
  EXPECT_EQ(md->status.phase, kPhaseDegraded);
  EXPECT_EQ(md->status.endpoint, "qwen-pd.team-a.svc:8000");
  EXPECT_TRUE(isConditionTrue(md->status.conditions, model_deployment::kCacheAttached));
  EXPECT_FALSE(isConditionTrue(md->status.conditions, model_deployment::kRoleKindsReady));
  ASSERT_TRUE(md->status.kv_cache.has_value());
  EXPECT_EQ(md->status.kv_cache->binding, "team-a");
  EXPECT_EQ(md->status.kv_cache->pool, "shared-dram");
  EXPECT_EQ(md->status.kv_cache->domain, (AttachedDomain{"default", 64, "bfloat16"}));
  ASSERT_EQ(md->status.roles.size(), 3u);
  EXPECT_EQ(md->status.roles[1].ready_replicas, 1);
  EXPECT_EQ(md->status.roles[2].ready_replicas, std::nullopt);
  EXPECT_EQ(md->status.roles[2].unmanaged, true);
  EXPECT_EQ(modelDeploymentStatusToJson(md->status), status);
}

TEST(ModelDeployment, AbsentIsNotZero) {
  // Nothing observed: no figure is written, not even as 0 or "".
  ModelDeployment::Status unobserved;
  unobserved.kv_cache = KVCacheAttachmentStatus{};
  unobserved.kv_cache->domain = AttachedDomain{};
  ModelDeploymentRoleStatus bare;
  bare.name = "server";
  unobserved.roles.push_back(bare);
  EXPECT_EQ(modelDeploymentStatusToJson(unobserved),
            Json::parse(R"({"kvCache": {"domain": {}}, "roles": [{"name": "server"}]})"));
  EXPECT_EQ(modelDeploymentStatusToJson(ModelDeployment::Status{}), Json::object());

  // Observed zeros are figures: written as 0 and false.
  ModelDeployment::Status zeros;
  zeros.kv_cache = KVCacheAttachmentStatus{};
  zeros.kv_cache->domain = AttachedDomain{"", 0, ""};
  zeros.roles.push_back(ModelDeploymentRoleStatus{"server", "Server", 0, 0, 0, false});
  const Json encoded = modelDeploymentStatusToJson(zeros);
  EXPECT_EQ(encoded, Json::parse(R"({"kvCache": {"domain": {"blockSize": 0}},
    "roles": [{"name": "server", "kind": "Server", "replicas": 0, "readyReplicas": 0,
               "updatedReplicas": 0, "unmanaged": false}]})"));

  // And they read back as observed zeros, distinct from absent.
  const auto back =
      modelDeploymentFromJson(Json{{"metadata", {{"name", "x"}}}, {"status", encoded}});
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->status.roles.at(0).ready_replicas, 0);
  EXPECT_EQ(back->status.kv_cache->domain->block_size, 0);
  const auto absent = modelDeploymentFromJson(
      Json::parse(R"({"metadata": {"name": "x"}, "status": {"roles": [{"name": "server"}]}})"));
  ASSERT_TRUE(absent.ok()) << absent.status().message();
  EXPECT_EQ(absent->status.roles.at(0).ready_replicas, std::nullopt);
  EXPECT_EQ(absent->status.roles.at(0).unmanaged, std::nullopt);
  EXPECT_EQ(absent->status.kv_cache, std::nullopt);
}

}  // namespace
}  // namespace kvc::api
