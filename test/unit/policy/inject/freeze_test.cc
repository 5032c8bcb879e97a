// The UPDATE freeze of contract §7.7, as a table of old/new Pods.
#include "kvc/policy/inject/freeze.h"

#include <gtest/gtest.h>

#include <functional>

namespace kvc::policy {
namespace {

Json injectedPod() {
  return Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "chat-0", "namespace": "team-a",
      "labels": {"app": "chat", "kvcache.gpustack.ai/inject": "true"},
      "annotations": {"kvcache.gpustack.ai/binding": "team-a",
        "kvcache.gpustack.ai/engine": "vLLM",
        "kvcache.gpustack.ai/client-config": "{\"master_server_address\":\"a:50051\"}",
        "kvcache.gpustack.ai/injected": "{\"binding\":\"team-a\"}"},
      "finalizers": ["example.com/hold"]},
    "spec": {"containers": [{"name": "server", "image": "vllm:1"}]}})");
}

Json plainPod() {
  Json pod = injectedPod();
  pod["metadata"]["labels"].erase("kvcache.gpustack.ai/inject");
  pod["metadata"]["annotations"] = Json::object();
  return pod;
}

struct Case {
  const char* name;
  std::function<Json()> before;
  std::function<void(Json&)> edit;
  std::vector<std::string> fields;  // the violations expected, in order
};

const std::string kLabel = "metadata.labels[kvcache.gpustack.ai/inject]";
const std::string kRecord = "metadata.annotations[kvcache.gpustack.ai/injected]";
const std::string kConfig = "metadata.annotations[kvcache.gpustack.ai/client-config]";

Json& annotations(Json& pod) { return pod["metadata"]["annotations"]; }
Json& labels(Json& pod) { return pod["metadata"]["labels"]; }

const Case kCases[] = {
    {"neither opted in, forged record admitted",
     plainPod,
     [](Json& p) { annotations(p)["kvcache.gpustack.ai/injected"] = "{}"; },
     {}},
    {"label added to a never-injected Pod",
     plainPod,
     [](Json& p) { labels(p)["kvcache.gpustack.ai/inject"] = "true"; },
     {kLabel}},
    {"label removed",
     injectedPod,
     [](Json& p) { labels(p).erase("kvcache.gpustack.ai/inject"); },
     {kLabel}},
    {"label changed to false",
     injectedPod,
     [](Json& p) { labels(p)["kvcache.gpustack.ai/inject"] = "false"; },
     {kLabel}},
    {"record edited",
     injectedPod,
     [](Json& p) { annotations(p)["kvcache.gpustack.ai/injected"] = "{\"binding\":\"b\"}"; },
     {kRecord}},
    {"record removed",
     injectedPod,
     [](Json& p) { annotations(p).erase("kvcache.gpustack.ai/injected"); },
     {kRecord}},
    {"client-config edited",
     injectedPod,
     [](Json& p) { annotations(p)["kvcache.gpustack.ai/client-config"] = "{}"; },
     {kConfig}},
    {"client-config removed",
     injectedPod,
     [](Json& p) { annotations(p).erase("kvcache.gpustack.ai/client-config"); },
     {kConfig}},
    {"all three stripped: one error naming all three",
     injectedPod,
     [](Json& p) {
       labels(p).erase("kvcache.gpustack.ai/inject");
       annotations(p) = Json::object();
     },
     {kLabel, kRecord, kConfig}},
    {"terminating Pod: config swap refused",
     injectedPod,
     [](Json& p) {
       p["metadata"]["deletionTimestamp"] = "2026-11-29T08:00:00Z";
       annotations(p)["kvcache.gpustack.ai/client-config"] = "{\"master_server_address\":\"b\"}";
     },
     {kConfig}},
    {"terminating Pod: finalizer cleared",
     injectedPod,
     [](Json& p) {
       p["metadata"]["deletionTimestamp"] = "2026-11-29T08:00:00Z";
       p["metadata"]["finalizers"] = Json::array();
     },
     {}},
    {"other labels and annotations edited",
     injectedPod,
     [](Json& p) {
       labels(p)["app"] = "chat-2";
       annotations(p)["example.com/note"] = "x";
     },
     {}},
    {"input annotations edited",
     injectedPod,
     [](Json& p) {
       annotations(p)["kvcache.gpustack.ai/engine"] = "SGLang";
       annotations(p)["kvcache.gpustack.ai/binding"] = "other";
     },
     {}},
    {"image and status changed",
     injectedPod,
     [](Json& p) {
       p["spec"]["containers"][0]["image"] = "vllm:2";
       p["status"] = {{"phase", "Running"}};
     },
     {}},
};

class Freeze : public testing::TestWithParam<Case> {};

TEST_P(Freeze, Judges) {
  const Case& c = GetParam();
  const Json before = c.before();
  Json after = before;
  c.edit(after);
  std::vector<std::string> fields;
  for (const FreezeViolation& violation : checkFreeze(before, after)) {
    fields.push_back(violation.field);
    EXPECT_NE(violation.message.find("let the Pod be replaced"), std::string::npos);
  }
  EXPECT_EQ(fields, c.fields);
}

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

INSTANTIATE_TEST_SUITE_P(Table, Freeze, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& param) {
                           std::string name;
                           for (const char* p = param.param.name; *p != '\0'; ++p) {
                             name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
                           }
                           return name;
                         });

TEST(FreezeMessage, IsOneInvalidErrorNamingEveryField) {
  Json before = injectedPod();
  Json after = before;
  labels(after).erase("kvcache.gpustack.ai/inject");
  annotations(after) = Json::object();
  const std::string message = freezeMessage("chat-0", checkFreeze(before, after));
  EXPECT_EQ(message.rfind("Pod \"chat-0\" is invalid: [", 0), 0u) << message;
  for (const std::string& field : {kLabel, kRecord, kConfig}) {
    EXPECT_NE(message.find(field + ": Forbidden: "), std::string::npos) << field;
  }
}

TEST(BindingWrites, NamesEveryFrozenKeyABindingWouldCopyOntoItsPod) {
  const Json binding = Json::parse(R"({"apiVersion": "v1", "kind": "Binding",
    "metadata": {"name": "chat-0",
      "labels": {"kvcache.gpustack.ai/inject": "false", "topology.kubernetes.io/zone": "a"},
      "annotations": {"kvcache.gpustack.ai/injected": "{}",
        "kvcache.gpustack.ai/client-config": "{}", "kvcache.gpustack.ai/binding": "b"}},
    "target": {"kind": "Node", "name": "n"}})");
  std::vector<std::string> fields;
  for (const FreezeViolation& violation : checkBindingWrites(binding)) {
    fields.push_back(violation.field);
    EXPECT_NE(violation.message.find("bind the Pod without it"), std::string::npos);
  }
  EXPECT_EQ(fields, (std::vector<std::string>{kLabel, kRecord, kConfig}));
}

TEST(BindingWrites, AdmitsAPlainBinding) {
  EXPECT_TRUE(checkBindingWrites(Json::parse(R"({"kind": "Binding", "metadata": {"name": "x",
      "annotations": {"example.com/a": "b"}}, "target": {"name": "n"}})"))
                  .empty());
  EXPECT_TRUE(checkBindingWrites(Json::parse(R"({"kind": "Binding", "target": {}})")).empty());
}

}  // namespace
}  // namespace kvc::policy
