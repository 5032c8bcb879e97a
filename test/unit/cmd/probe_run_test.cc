// `kvcache probe`'s I/O (internal/probe_run.h) against the in-process fake API server: the first
// replica runs alone and the others after it, the Binding's blockSize and the Settings' image
// reach the Pods, a refused Pod or one that never starts becomes that probe's failure (bounded by
// the timeout), every Pod is deleted, and an unknown Binding is bad input.
#include "internal/probe_run.h"

#include <gtest/gtest.h>

#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "fake_apiserver.h"
#include "kvc/api/settings.h"

namespace kvc::cmd {
namespace {

using kvc::testing::FakeApiServer;
using kvc::testing::FakeRequest;
using kvc::testing::ResponseWriter;

constexpr std::string_view kPods = "/api/v1/namespaces/team-a/pods";
constexpr std::string_view kBinding =
    "/apis/worker.gpustack.ai/v1/namespaces/team-a/kvcachepoolbindings/team-a";

std::string binding() {
  return Json{{"apiVersion", "worker.gpustack.ai/v1"},
              {"kind", "KVCachePoolBinding"},
              {"metadata", {{"name", "team-a"}, {"namespace", "team-a"}}},
              {"spec",
               {{"poolRef", {{"name", "shared-dram"}}},
                {"quota", {{"ceiling", "8Gi"}}},
                {"domain", {{"blockSize", 16}, {"dtype", "bfloat16"}}}}}}
      .dump();
}

std::string result(int replica, int written) {
  return Json{{"v", 1},
              {"replica", replica},
              {"engine", "vllm"},
              {"stage", "done"},
              {"vehicle", "file"},
              {"master", "m:50051"},
              {"tenant", "default"},
              {"prefixBlocks", 8},
              {"prefixRead", replica == 1 ? 0 : 8},
              {"written", written},
              {"lookups", written > 0 ? 80 : 0}}
      .dump();
}

std::string status(int code, const std::string& reason, const std::string& message) {
  return Json{{"kind", "Status"},
              {"status", "Failure"},
              {"reason", reason},
              {"message", message},
              {"code", code}}
      .dump();
}

// A cluster with one Binding whose created Pods answer as `pod_state` says.
class ProbeRunTest : public ::testing::Test {
protected:
  enum class PodState { Succeeds, NeverStarts, Refused };

  void SetUp() override {
    server_.setHandler([this](const FakeRequest& r, ResponseWriter& w) { handle(r, w); });
    options_.namespace_name = "team-a";
    options_.binding = "team-a";
    options_.workload.deadline_seconds = 1;
    options_.start_timeout = std::chrono::seconds(1);
  }

  void handle(const FakeRequest& r, ResponseWriter& w) {
    std::lock_guard lock(mu_);
    if (r.path == kBinding) {
      w.respond(200, binding());
    } else if (r.path.starts_with(kBinding.substr(0, kBinding.rfind('/')))) {
      w.respond(404, status(404, "NotFound", "kvcachepoolbindings not found"));
    } else if (r.path.find("/configmaps/") != std::string::npos) {
      w.respond(404, status(404, "NotFound", "configmaps not found"));
    } else if (r.method == "POST" && r.path == kPods) {
      if (state_ == PodState::Refused) {
        w.respond(403, status(403, "Forbidden",
                              "admission webhook \"pods.kvcache.gpustack.ai\" denied the request: "
                              "no grant. Fix: wait"));
        return;
      }
      Json pod = Json::parse(r.body);
      events_.push_back("create " + pod["metadata"]["name"].get<std::string>());
      created_.push_back(pod);
      w.respond(201, pod.dump());
    } else if (r.method == "GET" && r.path.starts_with(kPods)) {
      const std::string name = r.path.substr(kPods.size() + 1);
      events_.push_back("get " + name);
      w.respond(200, podAnswer(name).dump());
    } else if (r.method == "DELETE" && r.path.starts_with(kPods)) {
      events_.push_back("delete " + r.path.substr(kPods.size() + 1));
      w.respond(200, R"({"kind":"Status","status":"Success"})");
    } else {
      w.respond(404, status(404, "NotFound", r.path));
    }
  }

  Json podAnswer(const std::string& name) const {
    Json pod{{"metadata", {{"name", name}}}, {"spec", {{"nodeName", "node-1"}}}};
    if (state_ == PodState::NeverStarts) {
      pod["status"] = {{"phase", "Pending"},
                       {"containerStatuses",
                        {{{"state",
                           {{"waiting",
                             {{"reason", "ErrImageNeverPull"},
                              {"message", "image is not present with pull policy of Never"}}}}}}}}};
      return pod;
    }
    const bool cleanup = name.ends_with("-clean");
    const std::string message =
        cleanup ? Json{{"v", 1}, {"replica", 0}, {"stage", "done"}, {"removed", 40}}.dump()
                : result(name.back() - '0', writes_);
    pod["status"] = {{"phase", "Succeeded"},
                     {"containerStatuses",
                      {{{"state", {{"terminated", {{"exitCode", 0}, {"message", message}}}}}}}}};
    return pod;
  }

  Result<policy::ProbeReport> run() {
    std::ostringstream progress;
    return runProbe(*kube::Client::create(server_.config()), options_, progress);
  }

  std::vector<std::string> events() {
    std::lock_guard lock(mu_);
    return events_;
  }

  FakeApiServer server_;
  ProbeRunOptions options_;
  std::mutex mu_;
  PodState state_ = PodState::Succeeds;
  int writes_ = 0;  // blocks each replica reports written
  std::vector<std::string> events_;
  std::vector<Json> created_;
};

TEST_F(ProbeRunTest, TheFirstReplicaRunsAloneThenTheOthersAndEveryPodIsDeleted) {
  options_.replicas = 3;
  auto report = run();
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->probes.size(), 3u);
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->probes[1].prefix_read, 8);
  EXPECT_EQ(report->probes[0].node, "node-1");
  const std::string one = policy::probePodName(report->run, 1);
  const std::string two = policy::probePodName(report->run, 2);
  const std::string three = policy::probePodName(report->run, 3);
  const std::vector<std::string> expected = {"create " + one,   "get " + one,    "create " + two,
                                             "create " + three, "get " + two,    "get " + three,
                                             "delete " + one,   "delete " + two, "delete " + three};
  EXPECT_EQ(events(), expected);
}

TEST_F(ProbeRunTest, ALastPodRemovesTheBlocksTheRunWroteUnlessTheyAreKept) {
  writes_ = 24;
  options_.replicas = 2;
  auto report = run();
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_TRUE(report->cleanup.has_value());
  EXPECT_EQ(report->cleanup->removed, 40);
  EXPECT_EQ(report->probes.size(), 2u);  // the cleanup is not a probe
  const std::string clean = policy::probeCleanupPodName(report->run);
  const std::vector<std::string> seen = events();
  ASSERT_GE(seen.size(), 5u);
  const std::vector<std::string> tail(seen.end() - 5, seen.end());
  const std::vector<std::string> expected = {
      "create " + clean, "get " + clean, "delete " + policy::probePodName(report->run, 1),
      "delete " + policy::probePodName(report->run, 2), "delete " + clean};
  EXPECT_EQ(tail, expected);
  ASSERT_EQ(created_.size(), 3u);
  EXPECT_NE(created_[2].dump().find(R"({"name":"KVC_PROBE_MODE","value":"clean"})"),
            std::string::npos);

  events_.clear();
  created_.clear();
  options_.keep_blocks = true;
  report = run();
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->cleanup.has_value());
  EXPECT_TRUE(report->blocks_kept);
  EXPECT_EQ(created_.size(), 2u);
}

TEST_F(ProbeRunTest, ThePodsCarryTheBindingsBlockSizeAndTheSettingsImage) {
  options_.replicas = 1;
  ASSERT_TRUE(run().ok());
  ASSERT_EQ(created_.size(), 1u);
  const Json& container = created_[0]["spec"]["containers"][0];
  EXPECT_EQ(container["image"], api::kDefaultBackendImage);
  bool block_tokens = false;
  for (const Json& env : container["env"]) {
    block_tokens |= env["name"] == "KVC_PROBE_BLOCK_TOKENS" && env["value"] == "16";
  }
  EXPECT_TRUE(block_tokens) << container["env"].dump();
  EXPECT_EQ(created_[0]["metadata"]["annotations"]["kvcache.gpustack.ai/binding"], "team-a");
}

TEST_F(ProbeRunTest, ARefusedPodIsThatProbesFailureWithTheWebhooksMessage) {
  state_ = PodState::Refused;
  options_.replicas = 2;
  auto report = run();
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_FALSE(report->ok());
  ASSERT_EQ(report->probes.size(), 2u);
  EXPECT_EQ(report->probes[0].stage, policy::ProbeStage::Admission);
  EXPECT_NE(policy::probeFailureMessage(report->probes[0]).find("denied the request: no grant"),
            std::string::npos);
}

TEST_F(ProbeRunTest, APodThatNeverStartsFailsAtTheTimeoutNamingWhyAndIsDeleted) {
  state_ = PodState::NeverStarts;
  options_.replicas = 1;
  const auto start = std::chrono::steady_clock::now();
  auto report = run();
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->probes.size(), 1u);
  EXPECT_EQ(report->probes[0].stage, policy::ProbeStage::Start);
  EXPECT_NE(report->probes[0].detail.find("ErrImageNeverPull"), std::string::npos);
  EXPECT_LT(took, std::chrono::seconds(10));  // deadline 1 s + start timeout 1 s, then one poll
  EXPECT_EQ(events().back(), "delete " + policy::probePodName(report->run, 1));
}

TEST_F(ProbeRunTest, AnUnknownBindingIsBadInputNamingHowToListThem) {
  options_.binding = "nope";
  auto report = run();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::InvalidArgument);
  EXPECT_NE(report.status().message().find("kubectl -n team-a get kvcpb"), std::string::npos)
      << report.status().message();
  EXPECT_TRUE(created_.empty());
}

}  // namespace
}  // namespace kvc::cmd
