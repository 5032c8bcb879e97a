// The ModelDeployment validation adapter: what it reads (the Settings; the Binding's chain only on
// CREATE with spec.kvCache; the namespace's labels unless the spec stays), how a failed read
// differs from a verdict, and how a verdict becomes an AdmissionReview answer. The rules themselves
// are golden-tested (test/golden/model-deployment/admission).
#include "kvc/webhook/model_deployment_handlers.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "kvc/webhook/routes.h"

namespace kvc::webhook {
namespace {

// The walkthrough's Step 3.
Json step3() {
  return Json::parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "ModelDeployment",
    "metadata": {"name": "qwen-chat", "namespace": "team-a"},
    "spec": {"model": {"name": "Qwen/Qwen2.5-7B-Instruct"},
             "engine": {"name": "vLLM", "image": "gpustack/runner:cuda13.0-vllm0.29.0"},
             "kvCache": {"poolRef": {"name": "team-a"}},
             "roles": [{"name": "server", "replicas": 2, "instanceType": null,
                        "resources": {"accelerator": "1"}}]}})");
}

AdmissionRequest review(std::string operation, Json object, Json old = Json()) {
  AdmissionRequest request;
  request.uid = "uid-9";
  request.kind = "ModelDeployment";
  request.resource = "modeldeployments";
  request.operation = std::move(operation);
  request.name = "qwen-chat";
  request.namespace_name = "team-a";
  request.object = std::move(object);
  request.old_object = std::move(old);
  return request;
}

// A view whose every read fails, counting the reads.
class Down : public policy::ClusterView {
public:
  mutable int reads = 0;
  policy::Lookup<api::KVCachePoolBinding> binding(std::string_view,
                                                  std::string_view) const override {
    ++reads;
    return unavailable("connection refused");
  }
  policy::Lookup<api::KVCachePool> pool(std::string_view) const override {
    ++reads;
    return unavailable("connection refused");
  }
  policy::Lookup<api::KVCacheBackend> backend(std::string_view) const override {
    ++reads;
    return unavailable("connection refused");
  }
};

ModelDeploymentValidation::SettingsSource dtypeOwned(bool owned) {
  return [owned] {
    api::Settings settings;
    settings.kv_cache_dtype_owned = owned;
    return settings;
  };
}

TEST(ModelDeploymentValidation, AdmitsStep3WithAWarningWhileTheBindingDoesNotExist) {
  const ModelDeploymentValidation validation(std::make_shared<policy::ClusterSnapshot>(),
                                             dtypeOwned(true));
  const AdmissionResponse response = validation.admitModelDeployment(review("CREATE", step3()));
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_EQ(response.uid, "uid-9");
  ASSERT_EQ(response.warnings.size(), 1u);
  EXPECT_NE(response.warnings[0].find("\"team-a\""), std::string::npos) << response.warnings[0];
}

TEST(ModelDeploymentValidation, ReadsTheDtypeSetting) {
  Json object = step3();
  object["spec"]["roles"][0]["extraArgs"] = {"--kv-cache-dtype=fp8_e4m3"};
  const auto view = std::make_shared<policy::ClusterSnapshot>();
  AdmissionResponse response = ModelDeploymentValidation(view, dtypeOwned(true))
                                   .admitModelDeployment(review("CREATE", object));
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 422);
  ASSERT_EQ(response.causes.size(), 1u);
  EXPECT_EQ(response.causes[0].field, "spec.roles[0].extraArgs[0]");
  EXPECT_NE(response.message.find("ModelDeployment \"qwen-chat\" is invalid"), std::string::npos)
      << response.message;
  EXPECT_NE(response.message.find("spec.roles[0].command"), std::string::npos) << response.message;
  response = ModelDeploymentValidation(view, dtypeOwned(false))
                 .admitModelDeployment(review("CREATE", object));
  EXPECT_TRUE(response.allowed) << response.message;
}

TEST(ModelDeploymentValidation, AFailedReadOfTheBindingIsAnInternalErrorNeverAVerdict) {
  const auto down = std::make_shared<Down>();
  const ModelDeploymentValidation validation(down, nullptr);
  AdmissionResponse response = validation.admitModelDeployment(review("CREATE", step3()));
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 500);
  EXPECT_NE(response.message.find("connection refused"), std::string::npos) << response.message;
  EXPECT_NE(response.message.find("not a verdict"), std::string::npos) << response.message;

  // No spec.kvCache, or an UPDATE (the block is frozen): nothing is read.
  down->reads = 0;
  Json without = step3();
  without["spec"].erase("kvCache");
  EXPECT_TRUE(validation.admitModelDeployment(review("CREATE", without)).allowed);
  Json scaled = step3();
  scaled["metadata"]["generation"] = 2;
  scaled["spec"]["roles"][0]["replicas"] = 4;
  response = validation.admitModelDeployment(review("UPDATE", scaled, step3()));
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_EQ(down->reads, 0);
}

TEST(ModelDeploymentValidation, JudgesUpdatesAgainstTheStoredObjectAndAdmitsAFinalizerRemoval) {
  const ModelDeploymentValidation validation(std::make_shared<Down>(), dtypeOwned(true));
  Json moved = step3();
  moved["spec"]["kvCache"]["poolRef"]["name"] = "qwen-fp8";
  AdmissionResponse response = validation.admitModelDeployment(review("UPDATE", moved, step3()));
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(response.causes.at(0).field, "spec.kvCache");

  // A stored --kv-cache-dtype: every update is refused until it goes, a finalizer removal is not.
  Json stored = step3();
  stored["spec"]["roles"][0]["extraArgs"] = {"--kv-cache-dtype", "fp8_e4m3"};
  stored["metadata"]["finalizers"] = {"worker.gpustack.ai/model-deployment"};
  stored["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z";
  Json released = stored;
  released["metadata"]["finalizers"] = Json::array();
  EXPECT_TRUE(validation.admitModelDeployment(review("UPDATE", released, stored)).allowed);
}

// A namespace-labels source answering `labels` for team-a, counting the reads.
struct Namespaces {
  std::map<std::string, std::string> labels;
  int reads = 0;

  ModelDeploymentValidation::NamespaceLabelsSource source() {
    return [this](std::string_view namespace_name)
               -> Result<std::optional<std::map<std::string, std::string>>> {
      ++reads;
      if (namespace_name != "team-a") {
        return std::optional<std::map<std::string, std::string>>();
      }
      return std::optional<std::map<std::string, std::string>>(labels);
    };
  }
};

// Step 3 without a cache, its role privileged.
Json privilegedRole() {
  Json object = step3();
  object["spec"].erase("kvCache");
  object["spec"]["roles"][0]["privileged"] = true;
  return object;
}

TEST(ModelDeploymentValidation, RefusesARoleTheNamespacesPodSecurityLevelWouldRefuse) {
  Namespaces namespaces{{{"pod-security.kubernetes.io/enforce", "baseline"}}};
  const ModelDeploymentValidation validation(std::make_shared<policy::ClusterSnapshot>(), nullptr,
                                             namespaces.source());
  AdmissionResponse response = validation.admitModelDeployment(review("CREATE", privilegedRole()));
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 422);
  ASSERT_EQ(response.causes.size(), 1u);
  EXPECT_EQ(response.causes[0].field, "spec.roles[0].privileged");
  for (const char* named :
       {"namespace \"team-a\"", "level \"baseline\"", "pod-security.kubernetes.io/enforce",
        "Remove spec.roles[0].privileged"}) {
    EXPECT_NE(response.message.find(named), std::string::npos) << named << ": " << response.message;
  }
  EXPECT_EQ(namespaces.reads, 1);

  // An update that leaves the role as it was is not refused for it; a finalizer removal reads
  // nothing.
  Json scaled = privilegedRole();
  scaled["spec"]["roles"][0]["replicas"] = 4;
  response = validation.admitModelDeployment(review("UPDATE", scaled, privilegedRole()));
  EXPECT_TRUE(response.allowed) << response.message;
  EXPECT_EQ(namespaces.reads, 2);
  Json finalized = privilegedRole();
  finalized["metadata"]["finalizers"] = {"worker.gpustack.ai/model-deployment"};
  EXPECT_TRUE(
      validation.admitModelDeployment(review("UPDATE", finalized, privilegedRole())).allowed);
  EXPECT_EQ(namespaces.reads, 2);

  // Without the label the namespace is privileged (the cluster default).
  namespaces.labels.clear();
  EXPECT_TRUE(validation.admitModelDeployment(review("CREATE", privilegedRole())).allowed);
}

TEST(ModelDeploymentValidation, NamesTheTcpTwReuseSettingForAnSGLangPrefillRole) {
  Namespaces namespaces{{{"pod-security.kubernetes.io/enforce", "baseline"}}};
  Json object = step3();
  object["spec"].erase("kvCache");
  object["spec"]["engine"]["name"] = "SGLang";
  object["spec"]["roles"][0]["kind"] = "Prefill";
  const ModelDeploymentValidation validation(
      std::make_shared<policy::ClusterSnapshot>(),
      [] {
        api::Settings settings;
        settings.tcp_tw_reuse = true;
        return settings;
      },
      namespaces.source());
  const AdmissionResponse response = validation.admitModelDeployment(review("CREATE", object));
  ASSERT_FALSE(response.allowed);
  ASSERT_EQ(response.causes.size(), 1u);
  EXPECT_EQ(response.causes[0].field, "spec.roles[0]");
  EXPECT_NE(response.message.find("the Setting model-deployment-tcp-tw-reuse"), std::string::npos)
      << response.message;
  EXPECT_NE(response.message.find("net.ipv4.tcp_tw_reuse"), std::string::npos) << response.message;
}

TEST(ModelDeploymentValidation, AFailedReadOfTheNamespaceIsAnInternalErrorNeverAVerdict) {
  const ModelDeploymentValidation validation(
      std::make_shared<policy::ClusterSnapshot>(), nullptr,
      [](std::string_view) -> Result<std::optional<std::map<std::string, std::string>>> {
        return permissionDenied("namespaces \"team-a\" is forbidden");
      });
  const AdmissionResponse response =
      validation.admitModelDeployment(review("CREATE", privilegedRole()));
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 500);
  EXPECT_NE(response.message.find("labels of namespace \"team-a\""), std::string::npos)
      << response.message;
  EXPECT_NE(response.message.find("is forbidden"), std::string::npos) << response.message;
}

TEST(ModelDeploymentValidation, AMalformedObjectIsAnAnswerNeverACrash) {
  const ModelDeploymentValidation validation(std::make_shared<Down>(), nullptr);
  for (const Json& object :
       {Json::array({1, 2}), Json::parse(R"({"metadata": {"name": "x"}, "spec": 7})"),
        Json::parse(R"({"metadata": {"name": "x"}, "spec": {"roles": "all"}})")}) {
    const AdmissionResponse response = validation.admitModelDeployment(review("CREATE", object));
    EXPECT_FALSE(response.allowed) << object.dump();
    EXPECT_EQ(response.code, 400) << object.dump();
    EXPECT_NE(response.message.find("ModelDeployment"), std::string::npos) << response.message;
  }
  EXPECT_TRUE(validation.admitModelDeployment(review("DELETE", Json())).allowed);
}

TEST(ModelDeploymentValidationRoute, IsServedOnItsPathWhenConfigured) {
  runtime::Registry metrics;
  WebhookRoutes config;
  config.metrics = &metrics;
  config.model_deployment = std::make_shared<ModelDeploymentValidation>(
      std::make_shared<policy::ClusterSnapshot>(), nullptr);
  auto routes = makeRoutes(config);
  ASSERT_EQ(routes.count(std::string(kValidateModelDeploymentPath)), 1u);
  EXPECT_EQ(kValidateModelDeploymentPath, "/validate-worker-gpustack-ai-v1-modeldeployment");

  Json object = step3();
  object["spec"]["roles"][0]["env"] = {{{"name", "MOONCAKE_CONFIG_PATH"}, {"value", "/x"}}};
  Json body = {{"apiVersion", "admission.k8s.io/v1"},
               {"kind", "AdmissionReview"},
               {"request",
                {{"uid", "u-3"},
                 {"operation", "CREATE"},
                 {"name", "qwen-chat"},
                 {"namespace", "team-a"},
                 {"resource", {{"resource", "modeldeployments"}}},
                 {"object", object}}}};
  runtime::HttpServerRequest http;
  http.method = "POST";
  http.path = std::string(kValidateModelDeploymentPath);
  http.headers["content-type"] = "application/json";
  http.body = body.dump();
  const runtime::HttpServerResponse out =
      routes.at(std::string(kValidateModelDeploymentPath))(http);
  ASSERT_EQ(out.status, 200);
  const Json answer = Json::parse(out.body);
  EXPECT_EQ(answer["response"]["uid"], "u-3");
  EXPECT_EQ(answer["response"]["allowed"], false);
  EXPECT_EQ(answer["response"]["status"]["details"]["causes"][0]["field"],
            "spec.roles[0].env[0].name");
  // The object the causes are about, so kubectl prints `The ModelDeployment "qwen-chat" is
  // invalid: spec.roles[0].env[0].name: Forbidden: …` as it does for the API's own rules.
  EXPECT_EQ(answer["response"]["status"]["details"]["group"], "worker.gpustack.ai");
  EXPECT_EQ(answer["response"]["status"]["details"]["kind"], "ModelDeployment");
  EXPECT_EQ(answer["response"]["status"]["details"]["name"], "qwen-chat");
  EXPECT_NE(metrics.render().find("kvcache_admission_requests_total{webhook=\"validate-"
                                  "modeldeployment\",result=\"refused\",reason=\"Invalid\","
                                  "code=\"422\"} 1\n"),
            std::string::npos)
      << metrics.render();

  WebhookRoutes without;
  without.metrics = &metrics;
  EXPECT_EQ(makeRoutes(without).count(std::string(kValidateModelDeploymentPath)), 0u);
}

}  // namespace
}  // namespace kvc::webhook
