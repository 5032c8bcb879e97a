// The KVCacheBackend validation adapter: what it reads (the Setting, and only that), how a
// verdict becomes an AdmissionReview answer, and that no object shape makes it crash. The rules
// themselves are golden-tested (test/golden/quota/admission-backend).
#include "kvc/webhook/backend_handlers.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kvc/webhook/routes.h"

namespace kvc::webhook {
namespace {

// Seed Step 1, spec.image unset on purpose.
Json step1() {
  return Json::parse(R"({"apiVersion": "worker.gpustack.ai/v1", "kind": "KVCacheBackend",
    "metadata": {"name": "mooncake-dram"},
    "spec": {"type": "Mooncake", "connection": {"managed": {"leader": {},
      "members": [{"nodeSelector": {"kubernetes.io/os": "linux"}, "medium": "DRAM",
                   "capacityPerMember": "8Gi"}]}}}})");
}

AdmissionRequest review(std::string operation, Json object, Json old = Json()) {
  AdmissionRequest request;
  request.uid = "uid-7";
  request.kind = "KVCacheBackend";
  request.resource = "kvcachebackends";
  request.operation = std::move(operation);
  request.name = "mooncake-dram";
  request.object = std::move(object);
  request.old_object = std::move(old);
  return request;
}

// A Settings source that counts its reads and hands out `image` as kv-cache-backend-image.
struct CountingSettings {
  std::string image;
  std::shared_ptr<int> reads = std::make_shared<int>(0);

  BackendValidation::SettingsSource source() const {
    return [image = image, reads = reads] {
      ++*reads;
      api::Settings settings;
      settings.kv_cache_backend_image = image;
      return settings;
    };
  }
};

TEST(BackendValidation, AdmitsTheSeedsStep1WithTheSettingsImage) {
  const CountingSettings settings{"kvcache-operator/store:0.3.13.post1-cpu"};
  const BackendValidation validation(settings.source());
  const AdmissionResponse response = validation.admitBackend(review("CREATE", step1()));
  EXPECT_TRUE(response.allowed);
  EXPECT_EQ(response.uid, "uid-7");
  EXPECT_TRUE(response.causes.empty());
  EXPECT_GE(*settings.reads, 1);
}

TEST(BackendValidation, ReadsTheSettingSoAClearedOneRefusesAnImagelessBackend) {
  const CountingSettings cleared{""};
  const BackendValidation validation(cleared.source());
  const AdmissionResponse response = validation.admitBackend(review("CREATE", step1()));
  ASSERT_FALSE(response.allowed);
  EXPECT_EQ(*cleared.reads, 1);
  EXPECT_EQ(response.code, 422);
  EXPECT_EQ(response.reason, "Invalid");
  EXPECT_NE(response.message.find("KVCacheBackend \"mooncake-dram\" is invalid: spec.image"),
            std::string::npos)
      << response.message;
  EXPECT_NE(response.message.find("kv-cache-backend-image"), std::string::npos);
  ASSERT_EQ(response.causes.size(), 1u);
  EXPECT_EQ(response.causes[0].field, "spec.image");
  EXPECT_EQ(response.causes[0].reason, "FieldValueRequired");

  Json named = step1();
  named["spec"]["image"] = "registry.example.com/mooncake/store:0.3.13";
  EXPECT_TRUE(validation.admitBackend(review("CREATE", named)).allowed);
}

TEST(BackendValidation, WithoutASourceTheBuiltInSettingApplies) {
  const BackendValidation validation(nullptr);
  EXPECT_TRUE(validation.admitBackend(review("CREATE", step1())).allowed);
}

TEST(BackendValidation, GivesOneCausePerFieldErrorEachWithItsPath) {
  Json object = step1();
  object["spec"]["connection"]["managed"]["leader"] = {
      {"replicas", 3}, {"electionBackend", "None"}, {"extraArgs", {"-enable_snapshot=true"}}};
  object["spec"]["connection"]["managed"]["members"][0]["capacityPerMember"] = "0";
  const BackendValidation validation(CountingSettings{"img:1"}.source());
  const AdmissionResponse response = validation.admitBackend(review("CREATE", object));
  ASSERT_FALSE(response.allowed);
  ASSERT_EQ(response.causes.size(), 3u);
  EXPECT_EQ(response.causes[0].field, "spec.connection.managed.leader.replicas");
  EXPECT_EQ(response.causes[0].reason, "FieldValueInvalid");
  EXPECT_EQ(response.causes[1].field, "spec.connection.managed.leader.extraArgs[0]");
  EXPECT_EQ(response.causes[1].reason, "FieldValueForbidden");
  EXPECT_NE(response.causes[1].message.find("another key's bytes instead of a miss"),
            std::string::npos);
  EXPECT_EQ(response.causes[2].field, "spec.connection.managed.members[0].capacityPerMember");
  // As the API's own causes: the field beside the message, not in it (kubectl prints both).
  for (const StatusCause& cause : response.causes) {
    EXPECT_EQ(cause.message.find(cause.field + ": "), std::string::npos) << cause.message;
  }
  EXPECT_EQ(response.causes[1].message.rfind("Forbidden: ", 0), 0u) << response.causes[1].message;
  EXPECT_EQ(response.details_group, "worker.gpustack.ai");
  EXPECT_EQ(response.details_kind, "KVCacheBackend");
  EXPECT_EQ(response.details_name, "mooncake-dram");
}

TEST(BackendValidation, AMalformedObjectIsAnAnswerNeverACrash) {
  const BackendValidation validation(CountingSettings{"img:1"}.source());
  // Not an object at all: nothing to judge.
  AdmissionResponse response = validation.admitBackend(review("CREATE", Json::array({1, 2})));
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 400);
  // Wrong types, a quantity that does not parse, garbage where a list belongs: field errors.
  for (const auto& [pointer, value, field] :
       std::vector<std::tuple<std::string, Json, std::string>>{
           {"/spec/connection/managed/leader/replicas", "three",
            "spec.connection.managed.leader.replicas"},
           {"/spec/connection/managed/members/0/capacityPerMember", "8 GiB",
            "spec.connection.managed.members[0].capacityPerMember"},
           {"/spec/connection/managed/members/0/capacityPerMember", 1.5,
            "spec.connection.managed.members[0].capacityPerMember"},
           {"/spec/connection/managed/members/0/localDisks",
            Json::parse(R"([{"path": "/var/lib/kvcache", "capacity": "lots"}])"),
            "spec.connection.managed.members[0].localDisks[0].capacity"},
           {"/spec/connection/managed/members", "all of them", "spec.connection.managed.members"},
           {"/spec/connection", 7, "spec.connection"},
           {"/spec/transport/protocol", "Carrier-Pigeon", "spec.transport.protocol"},
       }) {
    Json object = step1();
    object[Json::json_pointer(pointer)] = value;
    response = validation.admitBackend(review("CREATE", object));
    ASSERT_FALSE(response.allowed) << pointer;
    EXPECT_EQ(response.code, 422) << pointer;
    ASSERT_FALSE(response.causes.empty()) << pointer;
    EXPECT_EQ(response.causes[0].field, field) << response.message;
  }
  // No metadata.name: the refusal still names the request's object.
  Json nameless = step1();
  nameless.erase("metadata");
  response = validation.admitBackend(review("CREATE", nameless));
  EXPECT_EQ(response.code, 422);
  EXPECT_NE(response.message.find("\"mooncake-dram\""), std::string::npos) << response.message;
}

TEST(BackendValidation, AdmitsAFinalizerRemovalWhateverTheSettingSays) {
  Json old = step1();
  old["metadata"]["deletionTimestamp"] = "2025-06-01T11:59:00Z";
  old["metadata"]["finalizers"] = {"worker.gpustack.ai/kvcache-backend"};
  Json now = old;
  now["metadata"]["finalizers"] = Json::array();
  const BackendValidation validation(CountingSettings{""}.source());
  EXPECT_TRUE(validation.admitBackend(review("UPDATE", now, old)).allowed);
}

TEST(BackendValidation, JudgesUpdatesAgainstTheStoredObject) {
  Json old = step1();
  old["status"]["usedBy"] = {{{"kind", "KVCachePool"}, {"namespace", ""}, {"name", "shared-dram"}}};
  Json now = old;
  now["spec"]["connection"]["managed"]["leader"]["multiTenancy"] = false;
  const BackendValidation validation(nullptr);
  const AdmissionResponse response = validation.admitBackend(review("UPDATE", now, old));
  ASSERT_FALSE(response.allowed);
  ASSERT_EQ(response.causes.size(), 1u);
  EXPECT_EQ(response.causes[0].field, "spec.connection.managed.leader.multiTenancy");
  EXPECT_NE(response.message.find("\"shared-dram\""), std::string::npos);
}

TEST(BackendValidation, PassesWarningsAndAdmitsOtherOperations) {
  Json object = step1();
  object["spec"]["connection"]["managed"]["members"][0]["fabricInterfaceCount"] = 2;
  const BackendValidation validation(nullptr);
  const AdmissionResponse response = validation.admitBackend(review("CREATE", object));
  EXPECT_TRUE(response.allowed);
  ASSERT_EQ(response.warnings.size(), 1u);
  EXPECT_NE(response.warnings[0].find("fabricInterfaceCount"), std::string::npos);
  EXPECT_TRUE(validation.admitBackend(review("DELETE", Json())).allowed);
}

TEST(BackendValidationRoute, IsServedOnItsPathWhenConfigured) {
  runtime::Registry metrics;
  WebhookRoutes config;
  config.metrics = &metrics;
  config.backend = std::make_shared<BackendValidation>(CountingSettings{""}.source());
  auto routes = makeRoutes(config);
  ASSERT_EQ(routes.count(std::string(kValidateBackendPath)), 1u);
  EXPECT_EQ(kValidateBackendPath, "/validate-worker-gpustack-ai-v1-kvcachebackend");

  Json body = {{"apiVersion", "admission.k8s.io/v1"},
               {"kind", "AdmissionReview"},
               {"request",
                {{"uid", "u-1"},
                 {"operation", "CREATE"},
                 {"name", "mooncake-dram"},
                 {"resource", {{"resource", "kvcachebackends"}}},
                 {"object", step1()}}}};
  runtime::HttpServerRequest http;
  http.method = "POST";
  http.path = std::string(kValidateBackendPath);
  http.headers["content-type"] = "application/json";
  http.body = body.dump();
  const runtime::HttpServerResponse out = routes.at(std::string(kValidateBackendPath))(http);
  ASSERT_EQ(out.status, 200);
  const Json answer = Json::parse(out.body);
  EXPECT_EQ(answer["response"]["uid"], "u-1");
  EXPECT_EQ(answer["response"]["allowed"], false);
  EXPECT_EQ(answer["response"]["status"]["code"], 422);
  EXPECT_EQ(answer["response"]["status"]["details"]["causes"][0]["field"], "spec.image");
  EXPECT_NE(metrics.render().find("webhook=\"validate-backend\""), std::string::npos);

  WebhookRoutes without;
  without.metrics = &metrics;
  EXPECT_EQ(makeRoutes(without).count(std::string(kValidateBackendPath)), 0u);
}

}  // namespace
}  // namespace kvc::webhook
