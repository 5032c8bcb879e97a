#include "kvc/webhook/pod_handlers.h"

#include <gtest/gtest.h>

#include "kvc/api/kvcache.h"
#include "kvc/webhook/routes.h"

namespace kvc::webhook {
namespace {

std::shared_ptr<policy::ClusterSnapshot> cluster() {
  auto snapshot = std::make_shared<policy::ClusterSnapshot>();
  snapshot->add(*api::backendFromJson(Json::parse(R"({"metadata": {"name": "b"},
    "spec": {"connection": {"managed": {"leader": {}, "members": [{"medium": "DRAM"}]}}}})")));
  snapshot->add(*api::poolFromJson(Json::parse(R"({"metadata": {"name": "p"},
    "spec": {"backends": ["b"]}, "status": {"clientEndpoint": "b-leader:50051", "conditions":
    [{"type": "QuotaLedgerAvailable", "status": "True", "reason": "Available"}]}})")));
  snapshot->add(*api::bindingFromJson(Json::parse(R"({"metadata": {"name": "bind",
    "namespace": "ns"}, "spec": {"poolRef": {"name": "p"}, "domain": {"name": "d",
    "blockSize": 16, "dtype": "bfloat16"}}})")));
  return snapshot;
}

AdmissionRequest create(Json pod) {
  AdmissionRequest request;
  request.uid = "uid-1";
  request.kind = "Pod";
  request.resource = "pods";
  request.operation = "CREATE";
  request.namespace_name = "ns";
  request.object = std::move(pod);
  return request;
}

Json pod(const char* command) {
  Json p = Json::parse(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x",
    "labels": {"kvcache.gpustack.ai/inject": "true"}, "annotations": {
    "kvcache.gpustack.ai/binding": "bind", "kvcache.gpustack.ai/engine": "vLLM"}},
    "spec": {"containers": [{"name": "c", "args": ["serve"]}]}})");
  p["spec"]["containers"][0]["command"] = Json::array({command});
  return p;
}

class CountingObserver : public InjectionObserver {
public:
  void onInjection(const AdmissionRequest&, const policy::Decision& decision,
                   std::chrono::nanoseconds) override {
    last = decision.verdict;
    ++calls;
  }
  policy::Verdict last = policy::Verdict::NotOptedIn;
  int calls = 0;
};

TEST(PodMutator, PatchesTheRequestObjectIntoTheInjectedPod) {
  auto observer = std::make_shared<CountingObserver>();
  const PodMutator mutator(
      cluster(), [] { return api::Settings{}; }, observer);
  const AdmissionRequest request = create(pod("vllm"));
  const AdmissionResponse response = mutator.handle(request);
  ASSERT_TRUE(response.allowed);
  ASSERT_TRUE(response.patch.has_value());
  const Json patched = request.object.patch(*response.patch);
  EXPECT_EQ(patched["spec"]["containers"][0]["env"][0]["name"], "MOONCAKE_CONFIG_PATH");
  EXPECT_TRUE(patched["metadata"]["annotations"].contains("kvcache.gpustack.ai/injected"));
  EXPECT_EQ(observer->calls, 1);
  EXPECT_EQ(observer->last, policy::Verdict::Injected);
}

TEST(PodMutator, RefusesWith403AndTheFix) {
  const PodMutator mutator(cluster(), [] { return api::Settings{}; });
  const AdmissionResponse response = mutator.handle(create(pod("gosu")));
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 403);
  EXPECT_NE(response.message.find("Fix: "), std::string::npos);
  EXPECT_FALSE(response.patch.has_value());
  // The admissions counter's reason is the contract's refusal reason, not the Status reason.
  EXPECT_EQ(response.reason, "Forbidden");
  EXPECT_EQ(response.metric_reason, "UnrecognisedLauncher");
}

TEST(PodMutator, LeavesPodsWithoutTheLabelAndOtherOperationsAlone) {
  const PodMutator mutator(cluster(), [] { return api::Settings{}; });
  Json unlabelled = pod("vllm");
  unlabelled["metadata"]["labels"] = Json::object();
  AdmissionResponse response = mutator.handle(create(unlabelled));
  EXPECT_TRUE(response.allowed);
  EXPECT_FALSE(response.patch.has_value());
  AdmissionRequest update = create(pod("vllm"));
  update.operation = "UPDATE";
  response = mutator.handle(update);
  EXPECT_TRUE(response.allowed);
  EXPECT_FALSE(response.patch.has_value());
}

TEST(PodMutator, AnUnreadableClusterIsAnInternalError) {
  class Down : public policy::ClusterView {
  public:
    policy::Lookup<api::KVCachePoolBinding> binding(std::string_view,
                                                    std::string_view) const override {
      return unavailable("connection refused");
    }
    policy::Lookup<api::KVCachePool> pool(std::string_view) const override {
      return unavailable("x");
    }
    policy::Lookup<api::KVCacheBackend> backend(std::string_view) const override {
      return unavailable("x");
    }
  };
  const PodMutator mutator(std::make_shared<Down>(), [] { return api::Settings{}; });
  const AdmissionResponse response = mutator.handle(create(pod("vllm")));
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 500);
  EXPECT_NE(response.message.find("connection refused"), std::string::npos);
}

TEST(ValidatePodUpdate, RefusesAFreezeViolationWithOneCausePerField) {
  AdmissionRequest request = create(Json());
  request.operation = "UPDATE";
  request.name = "x";
  request.old_object = pod("vllm");
  request.old_object["metadata"]["annotations"]["kvcache.gpustack.ai/injected"] = "{}";
  request.object = request.old_object;
  request.object["metadata"]["labels"]["kvcache.gpustack.ai/inject"] = "false";
  request.object["metadata"]["annotations"].erase("kvcache.gpustack.ai/injected");
  const AdmissionResponse response = validatePod(request);
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 422);
  EXPECT_EQ(response.causes.size(), 2u);
}

TEST(ValidatePodUpdate, AdmitsOtherEditsOnEitherPath) {
  AdmissionRequest request = create(pod("vllm"));
  request.operation = "UPDATE";
  request.old_object = request.object;
  request.object["metadata"]["finalizers"] = Json::array();
  EXPECT_TRUE(validatePod(request).allowed);
  request.sub_resource = "status";
  request.object["status"] = {{"phase", "Running"}};
  EXPECT_TRUE(validatePod(request).allowed);
}

TEST(ValidatePodUpdate, JudgesStatusWritesByTheSameRule) {
  // The API server keeps label and annotation changes made through pods/status.
  AdmissionRequest request = create(pod("vllm"));
  request.operation = "UPDATE";
  request.sub_resource = "status";
  request.name = "x";
  request.old_object = request.object;
  request.object["metadata"]["labels"] = Json::object();
  const AdmissionResponse response = validatePod(request);
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 422);
  ASSERT_EQ(response.causes.size(), 1u);
  EXPECT_EQ(response.causes[0].field, "metadata.labels[kvcache.gpustack.ai/inject]");
}

TEST(ValidatePodBinding, RefusesABindingThatWritesAFrozenKey) {
  AdmissionRequest request = create(Json::parse(R"({"apiVersion": "v1", "kind": "Binding",
      "metadata": {"name": "x", "annotations": {"kvcache.gpustack.ai/client-config": "{}"}},
      "target": {"kind": "Node", "name": "n"}})"));
  request.sub_resource = "binding";
  request.name = "x";
  const AdmissionResponse response = validatePod(request);
  EXPECT_FALSE(response.allowed);
  EXPECT_EQ(response.code, 422);
  ASSERT_EQ(response.causes.size(), 1u);
  EXPECT_EQ(response.causes[0].field, "metadata.annotations[kvcache.gpustack.ai/client-config]");
  request.object["metadata"]["annotations"] = {{"example.com/placed-by", "me"}};
  EXPECT_TRUE(validatePod(request).allowed);
}

TEST(ValidatePod, AdmitsSubresourcesThatCannotMoveMetadata) {
  // ephemeralcontainers and resize drop metadata changes before validation.
  AdmissionRequest request = create(pod("vllm"));
  request.operation = "UPDATE";
  request.old_object = request.object;
  request.object["metadata"]["labels"] = Json::object();
  for (const char* sub : {"ephemeralcontainers", "resize"}) {
    request.sub_resource = sub;
    EXPECT_TRUE(validatePod(request).allowed) << sub;
  }
}

}  // namespace
}  // namespace kvc::webhook
