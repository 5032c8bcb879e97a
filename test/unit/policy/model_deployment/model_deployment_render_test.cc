// The roles of a ModelDeployment carry the client configuration Pod injection writes: one shared
// renderer (render.h), proven here by running both paths on the same Binding and engine and
// comparing what each wrote. Plus the invariants the golden corpus shows case by case: no
// connector without a reached pool, a take-over synthesises nothing, and the Pod-spec hash moves
// with the endpoint and the dtype Setting.
#include "kvc/policy/model_deployment/model_deployment_render.h"

#include <gtest/gtest.h>

#include <variant>

#include "kvc/api/kvcache.h"
#include "kvc/policy/inject/inject.h"
#include "kvc/policy/inject/keys.h"
#include "kvc/policy/model_deployment/model_deployment_endpoint.h"
#include "kvc/policy/store/store_network_policy.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {
namespace {

ClusterSnapshot cluster() {
  ClusterSnapshot snapshot;
  snapshot.add(*api::backendFromJson(Json::parse(R"({"metadata": {"name": "b"},
    "spec": {"connection": {"managed": {"leader": {}, "members": [{"medium": "DRAM"}]}}}})")));
  snapshot.add(*api::poolFromJson(Json::parse(R"({"metadata": {"name": "p"},
    "spec": {"backends": ["b"]},
    "status": {"clientEndpoint": "b-leader.gpustack-system.svc:50051",
               "conditions": [{"type": "QuotaLedgerAvailable", "status": "True",
                               "reason": "Available"}]}})")));
  snapshot.add(*api::bindingFromJson(Json::parse(R"({"metadata": {"name": "bind",
    "namespace": "ns"}, "spec": {"poolRef": {"name": "p"}, "quota": {"ceiling": "1Gi"},
    "domain": {"name": "dom", "blockSize": 16, "dtype": "fp8_e4m3"}}})")));
  return snapshot;
}

api::ModelDeployment deployment(std::string_view engine, std::string_view kind) {
  Json md = Json::parse(R"({"metadata": {"name": "md", "namespace": "ns"},
    "spec": {"model": {"name": "m"}, "engine": {"version": "1.0"},
             "kvCache": {"poolRef": {"name": "bind"}}, "roles": [{"name": "r"}]}})");
  md["spec"]["engine"]["name"] = engine;
  md["spec"]["roles"][0]["kind"] = kind;
  return *api::modelDeploymentFromJson(md);
}

// The Pod the injection goldens would hold for the same engine: its launch line alone.
Json pod(std::string_view engine, std::string_view role) {
  Json p = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "x", "namespace": "ns", "labels": {"kvcache.gpustack.ai/inject": "true"},
                 "annotations": {"kvcache.gpustack.ai/binding": "bind"}},
    "spec": {"containers": [{"name": "engine"}]}})");
  p["metadata"]["annotations"][std::string(kAnnotationEngine)] = engine;
  if (!role.empty()) {
    p["metadata"]["annotations"][std::string(kAnnotationRole)] = role;
  }
  Json& container = p["spec"]["containers"][0];
  if (engine == "vLLM") {
    container["command"] = {"vllm"};
    container["args"] = {"serve", "m"};
  } else {
    container["command"] = {"python3", "-m", "sglang.launch_server"};
    container["args"] = {"--model-path", "m"};
  }
  return p;
}

Resolution resolved(const ClusterSnapshot& snapshot, Engine engine) {
  ResolveOutcome outcome = resolveBinding("ns", "bind", engine, snapshot);
  EXPECT_TRUE(std::holds_alternative<Resolution>(outcome));
  return std::get<Resolution>(outcome);
}

Json renderRole(const api::ModelDeployment& md, std::optional<Resolution> binding,
                api::Settings settings = {}) {
  ModelDeploymentInputs inputs{std::move(binding), std::move(settings), ""};
  auto rendered = renderModelDeployment(md, inputs);
  EXPECT_TRUE(rendered.ok()) << rendered.status().message();
  return rendered->front().deployment;
}

Json tail(const Json& list, std::size_t from) {
  Json out = Json::array();
  for (std::size_t i = from; i < list.size(); ++i) {
    out.push_back(list[i]);
  }
  return out;
}

const Json& templateOf(const Json& deployment) { return deployment["spec"]["template"]; }
const Json& containerOf(const Json& deployment) {
  return templateOf(deployment)["spec"]["containers"][0];
}

struct Pairing {
  std::string_view engine;    // spec.engine.name and the Pod's engine annotation
  std::string_view pod_role;  // the Pod's role annotation ("" for a plain server)
  std::string_view kind;      // roles[].kind
};

// Every pairing where the two paths must agree: the store connector's kv_role follows the Pod's
// role annotation and the role's kind alike. (An SGLang Decode role differs by design: it swaps
// the host-tier switch for the decode-retraction one; see the golden corpus.)
// A managed store's NetworkPolicies admit role Pods by their labels: every label they select on
// is on every role Pod.
TEST(ModelDeploymentRender, RolePodsCarryTheLabelsTheStoresNetworkPoliciesAdmit) {
  auto backend = api::backendFromJson(Json::parse(R"({"metadata": {"name": "b", "uid": "u"},
      "spec": {"connection": {"managed": {"leader": {}, "members": [
        {"nodeSelector": {}, "medium": "DRAM", "capacityPerMember": "1Gi"}]}}}})"));
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  const Json leader = storeNetworkPolicies(*backend, {"gpustack-system", "store:1"})[0].object;
  const Json role_labels = roleObjectLabels("md", "decode");
  const Json& peer = leader["spec"]["ingress"][0]["from"][1]["podSelector"]["matchLabels"];
  ASSERT_FALSE(peer.empty());
  for (const auto& [key, value] : peer.items()) {
    EXPECT_EQ(role_labels.value(key, Json()), value) << key;
  }
  EXPECT_EQ(peer["app.kubernetes.io/name"], kModelDeploymentAppName);
}

TEST(ModelDeploymentAttachment, EqualsWhatThePodWebhookWritesForTheSameBindingAndEngine) {
  const ClusterSnapshot snapshot = cluster();
  for (const Pairing& pairing :
       {Pairing{"vLLM", "", "Server"}, Pairing{"vLLM", "Prefill", "Prefill"},
        Pairing{"vLLM", "Decode", "Decode"}, Pairing{"SGLang", "", "Server"},
        Pairing{"SGLang", "Prefill", "Prefill"}}) {
    SCOPED_TRACE(std::string(pairing.engine) + " " + std::string(pairing.kind));
    const Decision injected = inject(pod(pairing.engine, pairing.pod_role), "ns", snapshot, {});
    ASSERT_EQ(injected.verdict, Verdict::Injected) << injected.refusal->message;
    const Json& pod_spec = injected.object["spec"];
    const Json& pod_container = pod_spec["containers"][0];

    const api::ModelDeployment md = deployment(pairing.engine, pairing.kind);
    const Engine engine = *modelDeploymentEngine(md, "");
    const Json rendered = renderRole(md, resolved(snapshot, engine));
    const Json& container = containerOf(rendered);

    // Arguments: what follows each launch line is the same.
    const std::size_t launch = engine == Engine::SGLang ? 6 : 4;  // … --port 8000
    EXPECT_EQ(tail(container["args"], launch), tail(pod_container["args"], 2));
    // Variables: the same entries in the same order; a ModelDeployment adds MC_FORCE_TCP on
    // the tcp leg, after them.
    Json pod_env = pod_container["env"];
    pod_env.push_back({{"name", "MC_FORCE_TCP"}, {"value", "1"}});
    EXPECT_EQ(container["env"], pod_env);
    // The file vehicle: the same volume, mount and annotation (all absent on SGLang).
    EXPECT_EQ(templateOf(rendered)["spec"].value("volumes", Json()),
              pod_spec.value("volumes", Json()));
    EXPECT_EQ(container.value("volumeMounts", Json()), pod_container.value("volumeMounts", Json()));
    const std::string key(kAnnotationClientConfig);
    EXPECT_EQ(templateOf(rendered)["metadata"]["annotations"].value(key, Json()),
              injected.object["metadata"]["annotations"].value(key, Json()));
  }
}

TEST(ModelDeploymentAttachment, AnUnreachedPoolRendersNoConnectorAtAll) {
  const api::ModelDeployment md = deployment("vLLM", "Server");
  Resolution unreached = resolved(cluster(), Engine::VLLM);
  unreached.master_address.clear();
  for (const std::optional<Resolution>& binding :
       {std::optional<Resolution>(), std::optional(unreached)}) {
    const Json rendered = renderRole(md, binding);
    const Json& container = containerOf(rendered);
    EXPECT_EQ(container["args"], Json({"serve", "m", "--port", "8000"}));
    EXPECT_FALSE(container.contains("env"));
    EXPECT_FALSE(container.contains("volumeMounts"));
    EXPECT_FALSE(templateOf(rendered)["spec"].contains("volumes"));
    EXPECT_FALSE(templateOf(rendered)["metadata"]["annotations"].contains(
        std::string(kAnnotationClientConfig)));
  }
  auto roles = renderModelDeployment(md, {std::nullopt, {}, ""});
  ASSERT_TRUE(roles.ok());
  EXPECT_FALSE(roles->front().attached);
  EXPECT_FALSE(roles->front().attachment);
}

TEST(ModelDeploymentAttachment, ATakeOverSynthesisesNothing) {
  api::ModelDeployment md = deployment("SGLang", "Server");
  md.spec.roles[0].command = std::vector<std::string>{"/run.sh"};
  md.spec.roles[0].extra_args = {"--x"};
  md.spec.roles[0].env = {{"A", "b"}};
  auto roles = renderModelDeployment(md, {resolved(cluster(), Engine::SGLang), {}, ""});
  ASSERT_TRUE(roles.ok()) << roles.status().message();
  EXPECT_TRUE(roles->front().unmanaged);
  EXPECT_FALSE(roles->front().attached);
  const Json& container = containerOf(roles->front().deployment);
  EXPECT_EQ(container["command"], Json({"/run.sh"}));
  EXPECT_FALSE(container.contains("args"));
  EXPECT_FALSE(container.contains("env"));
  EXPECT_FALSE(container.contains("readinessProbe"));
}

std::string hashOf(const Json& deployment) {
  return templateOf(deployment)["metadata"]["annotations"][std::string(kPodSpecHashAnnotation)]
      .get<std::string>();
}

TEST(ModelDeploymentAttachment, TheReplicasRollWhenTheEndpointOrTheDtypeSettingChanges) {
  const ClusterSnapshot snapshot = cluster();
  for (std::string_view engine : {"vLLM", "SGLang"}) {
    const api::ModelDeployment md = deployment(engine, "Server");
    const Resolution before = resolved(snapshot, *modelDeploymentEngine(md, ""));
    Resolution moved = before;
    moved.master_address = "elsewhere.gpustack-system.svc:50051";
    api::Settings dtype_off;
    dtype_off.kv_cache_dtype_owned = false;
    const std::string base = hashOf(renderRole(md, before));
    EXPECT_EQ(hashOf(renderRole(md, before)), base);
    EXPECT_NE(hashOf(renderRole(md, moved)), base) << engine;
    EXPECT_NE(hashOf(renderRole(md, before, dtype_off)), base) << engine;
    EXPECT_NE(hashOf(renderRole(md, std::nullopt)), base) << engine;
  }
}

TEST(ModelDeploymentResources, AnEfaTransportTakesEfaInterfaces) {
  api::ModelDeployment md = deployment("vLLM", "Server");
  md.spec.roles[0].resources.interface_count = 4;
  md.spec.roles[0].resources.accelerator = "8";
  Resolution efa = resolved(cluster(), Engine::VLLM);
  efa.protocol = "efa";
  const Json rendered = renderRole(md, efa);
  EXPECT_EQ(containerOf(rendered)["resources"]["limits"],
            Json({{"nvidia.com/gpu", "8"}, {"vpc.amazonaws.com/efa", "4"}}));
  for (const Json& var : containerOf(rendered)["env"]) {
    EXPECT_NE(var["name"], "MC_FORCE_TCP") << "MC_FORCE_TCP belongs to the tcp leg only";
  }
}

TEST(ModelDeploymentEngine, AscendSelectsVLLMAscendAndNothingElse) {
  EXPECT_EQ(*modelDeploymentEngine(deployment("vLLM", "Server"), "ascend"), Engine::VLLMAscend);
  EXPECT_EQ(*modelDeploymentEngine(deployment("SGLang", "Server"), ""), Engine::SGLang);
  EXPECT_FALSE(modelDeploymentEngine(deployment("SGLang", "Server"), "ascend").ok());
  EXPECT_FALSE(modelDeploymentEngine(deployment("vLLM", "Server"), "Ascend").ok());
}

TEST(ModelDeploymentEngine, TheImageFormulaDoesNotDoubleTheV) {
  EXPECT_EQ(engineImage(Engine::VLLM, "0.29.0"), "vllm/vllm-openai:v0.29.0");
  EXPECT_EQ(engineImage(Engine::SGLang, "v0.5.18"), "lmsysorg/sglang:v0.5.18");
  EXPECT_EQ(engineImage(Engine::VLLMAscend, "0.11.0rc1"), "quay.io/ascend/vllm-ascend:v0.11.0rc1");
}

// The endpoint Service fronts every Pod of an all-Server deployment on the engine's named port,
// whatever number the role's ports give it; a prefill/decode split publishes none (its router is
// not offered).
TEST(ModelDeploymentEndpoint, AnAllServerDeploymentIsFrontedByOneServiceOnTheNamedPort) {
  api::ModelDeployment md = deployment("vLLM", "Server");
  md.spec.roles[0].ports.push_back({9000, "TCP"});
  const std::optional<Json> service = renderEndpointService(md);
  ASSERT_TRUE(service.has_value());
  EXPECT_EQ((*service)["metadata"]["name"], "md");
  EXPECT_EQ((*service)["metadata"]["namespace"], "ns");
  EXPECT_EQ((*service)["spec"]["selector"], (Json{{"app.kubernetes.io/name", "model-deployment"},
                                                  {"app.kubernetes.io/instance", "md"}}));
  EXPECT_EQ((*service)["spec"]["ports"][0]["port"], 8000);
  EXPECT_EQ((*service)["spec"]["ports"][0]["targetPort"], "http");
  EXPECT_EQ(endpointAddress(md), "md.ns.svc:8000");
  // The role's container names the port the Service targets.
  auto roles = renderModelDeployment(md, ModelDeploymentInputs{});
  ASSERT_TRUE(roles.ok()) << roles.status().toString();
  EXPECT_EQ((*roles)[0].deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["name"],
            "http");
  // Every Pod the Service selects carries its selector.
  const Json& pod_labels = (*roles)[0].deployment["spec"]["template"]["metadata"]["labels"];
  for (const auto& [key, value] : (*service)["spec"]["selector"].items()) {
    EXPECT_EQ(pod_labels.value(key, Json()), value) << key;
  }
}

TEST(ModelDeploymentEndpoint, APrefillDecodeSplitPublishesNone) {
  api::ModelDeployment md = deployment("SGLang", "Prefill");
  api::ModelDeploymentRole decode = md.spec.roles[0];
  decode.name = "d";
  decode.kind = std::string(api::kRoleKindDecode);
  md.spec.roles.push_back(decode);
  EXPECT_FALSE(renderEndpointService(md).has_value());
}

}  // namespace
}  // namespace kvc::policy
