// Invariants of policy::inject() that hold for every case, on top of the golden corpus: a refusal
// leaves the Pod untouched, and an injection writes only where the contract says it may.
#include "kvc/policy/inject/inject.h"

#include <gtest/gtest.h>

#include <set>

#include "kvc/api/kvcache.h"

namespace kvc::policy {
namespace {

ClusterSnapshot cluster(const char* ledger_status = "True",
                        const char* ledger_reason = "Available") {
  ClusterSnapshot snapshot;
  snapshot.add(*api::backendFromJson(Json::parse(R"({"metadata": {"name": "b"},
    "spec": {"connection": {"managed": {"leader": {}, "members": [{"medium": "DRAM"}]}}}})")));
  Json pool = Json::parse(R"({"metadata": {"name": "p"}, "spec": {"backends": ["b"]},
    "status": {"clientEndpoint": "b-leader.gpustack-system.svc:50051",
               "conditions": [{"type": "QuotaLedgerAvailable"}]}})");
  pool["status"]["conditions"][0]["status"] = ledger_status;
  pool["status"]["conditions"][0]["reason"] = ledger_reason;
  snapshot.add(*api::poolFromJson(pool));
  snapshot.add(*api::bindingFromJson(Json::parse(R"({"metadata": {"name": "bind",
    "namespace": "ns"}, "spec": {"poolRef": {"name": "p"}, "quota": {"ceiling": "1Gi"},
    "domain": {"name": "dom", "blockSize": 16, "dtype": "bfloat16"}}})")));
  return snapshot;
}

Json pod(const char* engine, Json container) {
  Json p = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "x", "namespace": "ns", "labels": {"kvcache.gpustack.ai/inject": "true"},
                 "annotations": {"kvcache.gpustack.ai/binding": "bind", "other": "keep"}},
    "spec": {"containers": [], "volumes": [{"name": "data", "emptyDir": {}}]}})");
  p["metadata"]["annotations"]["kvcache.gpustack.ai/engine"] = engine;
  p["spec"]["containers"].push_back(std::move(container));
  return p;
}

Json vllmContainer() {
  return Json::parse(R"({"name": "server", "image": "vllm", "command": ["vllm"],
    "args": ["serve"], "env": [{"name": "HF_HOME", "value": "/data"}],
    "volumeMounts": [{"name": "data", "mountPath": "/data"}]})");
}

Json sglangContainer() {
  return Json::parse(R"({"name": "server", "image": "sglang",
    "command": ["python3", "-m", "sglang.launch_server"], "args": ["--model-path", "m"],
    "env": [{"name": "MOONCAKE_MASTER", "value": "mine"}, {"name": "MC_TE_METRIC", "value": "0"},
            {"name": "MOONCAKE_MASTER", "value": "again"}]})");
}

// Every JSON pointer at which two documents differ, as a set of top-level-ish paths.
std::set<std::string> changedPaths(const Json& before, const Json& after) {
  std::set<std::string> paths;
  for (const Json& op : Json::diff(before, after)) {
    paths.insert(op["path"].get<std::string>());
  }
  return paths;
}

bool allowedPath(const std::string& path) {
  static const char* k_allowed[] = {"/spec/containers/0/env",
                                    "/spec/containers/0/args",
                                    "/spec/containers/0/volumeMounts",
                                    "/spec/volumes",
                                    "/metadata/annotations/kvcache.gpustack.ai~1client-config",
                                    "/metadata/annotations/kvcache.gpustack.ai~1injected"};
  for (const char* allowed : k_allowed) {
    if (path.rfind(allowed, 0) == 0) {
      return true;
    }
  }
  return false;
}

TEST(Inject, WritesOnlyWhereTheContractAllows) {
  const ClusterSnapshot snapshot = cluster();
  for (const Json& input : {pod("vLLM", vllmContainer()), pod("SGLang", sglangContainer())}) {
    const Decision decision = inject(input, "ns", snapshot, api::Settings{});
    ASSERT_EQ(decision.verdict, Verdict::Injected) << decision.refusal->message;
    for (const std::string& path : changedPaths(input, decision.object)) {
      EXPECT_TRUE(allowedPath(path)) << path;
    }
    // Existing entries keep their place and value unless the Binding answers for them.
    EXPECT_EQ(decision.object["spec"]["volumes"][0], input["spec"]["volumes"][0]);
    EXPECT_EQ(decision.object["metadata"]["annotations"]["other"], "keep");
  }
}

TEST(Inject, OverwritesEverySameNamedVariableInPlaceAndKeepsTheToggle) {
  const Decision decision = inject(pod("SGLang", sglangContainer()), "ns", cluster(), {});
  ASSERT_EQ(decision.verdict, Verdict::Injected);
  const Json& env = decision.object["spec"]["containers"][0]["env"];
  EXPECT_EQ(env[0],
            (Json{{"name", "MOONCAKE_MASTER"}, {"value", "b-leader.gpustack-system.svc:50051"}}));
  EXPECT_EQ(env[1], (Json{{"name", "MC_TE_METRIC"}, {"value", "0"}}));
  EXPECT_EQ(env[2]["value"], "b-leader.gpustack-system.svc:50051");
  int masters = 0;
  for (const Json& entry : env) {
    masters += entry["name"] == "MOONCAKE_MASTER" ? 1 : 0;
  }
  EXPECT_EQ(masters, 2);  // no third entry appended
}

TEST(Inject, ARefusalReturnsNoObjectAndLeavesTheInputAlone) {
  Json input = pod("vLLM", vllmContainer());
  input["spec"]["containers"][0]["command"] = Json::array({"bash", "-c", "vllm serve"});
  const Json copy = input;
  const Decision decision = inject(input, "ns", cluster(), {});
  ASSERT_EQ(decision.verdict, Verdict::Refused);
  EXPECT_EQ(decision.refusal->reason, RefusalReason::ShellCommandString);
  EXPECT_TRUE(decision.object.is_null());
  EXPECT_EQ(input, copy);
}

TEST(Inject, MultiTenancyDisabledInjectsNoTenantButRecordsTheDomain) {
  const Decision decision =
      inject(pod("vLLM", vllmContainer()), "ns", cluster("False", "MultiTenancyDisabled"), {});
  ASSERT_EQ(decision.verdict, Verdict::Injected);
  const std::string config =
      decision.object["metadata"]["annotations"]["kvcache.gpustack.ai/client-config"];
  EXPECT_EQ(config.find("tenant_id"), std::string::npos);
  const Json record =
      Json::parse(decision.object["metadata"]["annotations"]["kvcache.gpustack.ai/injected"]
                      .get<std::string>());
  EXPECT_EQ(record["domain"], "dom");
  EXPECT_EQ(record["tenantInjected"], false);
}

TEST(Inject, TheLabelMustBeExactlyTrue) {
  for (const char* value : {"True", "false", "1", "yes", ""}) {
    Json input = pod("vLLM", vllmContainer());
    input["metadata"]["labels"]["kvcache.gpustack.ai/inject"] = value;
    EXPECT_EQ(inject(input, "ns", cluster(), {}).verdict, Verdict::NotOptedIn) << value;
  }
}

class FailingView : public ClusterView {
public:
  Lookup<api::KVCachePoolBinding> binding(std::string_view, std::string_view) const override {
    return unavailable("connection refused");
  }
  Lookup<api::KVCachePool> pool(std::string_view) const override { return unavailable("x"); }
  Lookup<api::KVCacheBackend> backend(std::string_view) const override { return unavailable("x"); }
};

TEST(Inject, AFailedReadIsAnInfrastructureErrorNeverNotFound) {
  const Decision decision = inject(pod("vLLM", vllmContainer()), "ns", FailingView(), {});
  EXPECT_EQ(decision.verdict, Verdict::Failed);
  EXPECT_NE(decision.error.find("connection refused"), std::string::npos);
  EXPECT_EQ(decision.error.find("does not exist"), std::string::npos);
}

TEST(Inject, VocabularyProblemsAreReportedTogether) {
  Json input = pod("vLLM", vllmContainer());
  input["metadata"]["annotations"]["kvcache.gpustack.ai/bindng"] = "x";
  input["metadata"]["annotations"]["kvcache.gpustack.ai/injected"] = "{}";
  const Decision decision = inject(input, "ns", cluster(), {});
  ASSERT_EQ(decision.verdict, Verdict::Refused);
  EXPECT_EQ(decision.refusal->reason, RefusalReason::UnknownKey);
  EXPECT_NE(decision.refusal->message.find("kvcache.gpustack.ai/bindng"), std::string::npos);
  EXPECT_NE(decision.refusal->message.find("kvcache.gpustack.ai/injected"), std::string::npos);
}

}  // namespace
}  // namespace kvc::policy
