// The replica Events of a ModelDeployment (model_deployment_replicas.h): each transition of an
// engine Pod says what happened once, names the Pod, its role and node, and what to do; the
// runtime skew is judged only among the running replicas of the current templates.
#include "kvc/policy/model_deployment/model_deployment_replicas.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvc::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Json runningPod(std::string_view name = "qwen-chat-server-7c9d-abcde") {
  Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"namespace": "team-a",
                 "labels": {"app.kubernetes.io/name": "model-deployment",
                            "app.kubernetes.io/instance": "qwen-chat",
                            "app.kubernetes.io/component": "server"},
                 "annotations": {"kvcache.gpustack.ai/pod-spec-hash": "h1"}},
    "spec": {"nodeName": "gpu-0"},
    "status": {"phase": "Running",
               "containerStatuses": [{"name": "engine", "restartCount": 0,
                                      "image": "vllm/vllm-openai:v0.11.0",
                                      "imageID": "docker.io/vllm/vllm-openai@sha256:aaa",
                                      "state": {"running": {}}}]}})");
  pod["metadata"]["name"] = name;
  return pod;
}

std::vector<std::string> reasons(const std::vector<ModelDeploymentEvent>& events) {
  std::vector<std::string> out;
  for (const auto& event : events) {
    out.push_back(event.type + "/" + event.reason);
  }
  return out;
}

TEST(ReplicaTransitionEvents, APodSeenForTheFirstTimeSaysNothing) {
  Json after = runningPod();
  after["metadata"]["deletionTimestamp"] = "2026-12-02T10:00:00Z";
  EXPECT_THAT(replicaTransitionEvents(Json(), after), IsEmpty());
}

TEST(ReplicaTransitionEvents, AnUnchangedPodSaysNothing) {
  EXPECT_THAT(replicaTransitionEvents(runningPod(), runningPod()), IsEmpty());
}

TEST(ReplicaTransitionEvents, AnEvictionByTheAPIIsReportedOnceAndItsDeletionIsNotALeaving) {
  const Json before = runningPod();
  Json evicted = runningPod();
  evicted["status"]["conditions"] = Json::parse(R"([{"type": "DisruptionTarget",
    "status": "True", "reason": "EvictionByEvictionAPI",
    "message": "Eviction API: evicting"}])");
  const auto events = replicaTransitionEvents(before, evicted);
  ASSERT_THAT(reasons(events), ElementsAre("Warning/ReplicaEvicted"));
  EXPECT_EQ(events[0].message,
            "replica Pod team-a/qwen-chat-server-7c9d-abcde (role server, node gpu-0) was "
            "evicted by the eviction API (a node drain or an eviction request): Eviction API: "
            "evicting. Its Deployment qwen-chat-server starts a replacement; the KV blocks the "
            "engine held in its own memory are gone with it, and what it wrote to the shared "
            "cache stays there for the other replicas");
  // The API server deletes it next: the eviction already said why it leaves.
  Json deleted = evicted;
  deleted["metadata"]["deletionTimestamp"] = "2026-12-02T10:00:00Z";
  EXPECT_THAT(replicaTransitionEvents(evicted, deleted), IsEmpty());
}

TEST(ReplicaTransitionEvents, TheKubeletsNodePressureEvictionIsAnEviction) {
  Json after = runningPod();
  after["status"]["phase"] = "Failed";
  after["status"]["reason"] = "Evicted";
  after["status"]["message"] = "The node was low on resource: memory.";
  const auto events = replicaTransitionEvents(runningPod(), after);
  ASSERT_THAT(reasons(events), ElementsAre("Warning/ReplicaEvicted"));
  EXPECT_THAT(events[0].message,
              HasSubstr("was evicted by the kubelet under node pressure: The node was low on "
                        "resource: memory."));
  EXPECT_THAT(replicaTransitionEvents(after, after), IsEmpty());
}

TEST(ReplicaTransitionEvents, ATaintEvictionNamesTheTaint) {
  Json after = runningPod();
  after["status"]["conditions"] = Json::parse(
      R"([{"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}])");
  const auto events = replicaTransitionEvents(runningPod(), after);
  ASSERT_THAT(reasons(events), ElementsAre("Warning/ReplicaEvicted"));
  EXPECT_THAT(events[0].message, HasSubstr("NoExecute taint"));
}

TEST(ReplicaTransitionEvents, ADeletionIsALeavingWithItsGracePeriod) {
  Json after = runningPod();
  after["metadata"]["deletionTimestamp"] = "2026-12-02T10:00:00Z";
  after["metadata"]["deletionGracePeriodSeconds"] = 30;
  const auto events = replicaTransitionEvents(runningPod(), after);
  ASSERT_THAT(reasons(events), ElementsAre("Normal/ReplicaLeaving"));
  EXPECT_EQ(events[0].message,
            "replica Pod team-a/qwen-chat-server-7c9d-abcde (role server, node gpu-0) is "
            "leaving: it was deleted (a scale-down, a rollout replacing it, or a delete) and has "
            "30 s (terminationGracePeriodSeconds) to finish the requests it serves. What it "
            "wrote to the shared cache stays there for the other replicas");
  // Later updates of the terminating Pod say nothing more.
  EXPECT_THAT(replicaTransitionEvents(after, after), IsEmpty());
}

TEST(ReplicaTransitionEvents, ARestartNamesTheContainerHowItEndedAndWhereItsLogsAre) {
  Json after = runningPod();
  after["status"]["containerStatuses"][0]["restartCount"] = 2;
  after["status"]["containerStatuses"][0]["lastState"] =
      Json::parse(R"({"terminated": {"reason": "OOMKilled", "exitCode": 137}})");
  Json before = runningPod();
  before["status"]["containerStatuses"][0]["restartCount"] = 1;
  const auto events = replicaTransitionEvents(before, after);
  ASSERT_THAT(reasons(events), ElementsAre("Warning/ReplicaRestarted"));
  EXPECT_EQ(events[0].message,
            "container \"engine\" of replica Pod team-a/qwen-chat-server-7c9d-abcde (role server, "
            "node gpu-0) restarted (restart 2): it last terminated with OOMKilled, exit code 137. "
            "Its logs before the restart: kubectl -n team-a logs qwen-chat-server-7c9d-abcde -c "
            "engine --previous");
  EXPECT_THAT(replicaTransitionEvents(after, after), IsEmpty());
}

TEST(ReplicaTransitionEvents, AContainerThatAppearsRestartedCountsFromZero) {
  Json before = runningPod();
  before["status"].erase("containerStatuses");
  Json after = runningPod();
  after["status"]["containerStatuses"][0]["restartCount"] = 1;
  EXPECT_THAT(reasons(replicaTransitionEvents(before, after)),
              ElementsAre("Warning/ReplicaRestarted"));
}

TEST(ReplicaOwnerKey, NamesTheDeploymentOfARenderedRole) {
  EXPECT_EQ(replicaOwnerKey(runningPod()), "team-a/qwen-chat");
  Json other = runningPod();
  other["metadata"]["labels"]["app.kubernetes.io/name"] = "something-else";
  EXPECT_EQ(replicaOwnerKey(other), "");
}

std::map<std::string, std::string> current() { return {{"server", "h1"}, {"decode", "h2"}}; }

TEST(RuntimeVersionSkew, OneBuildIsNoSkew) {
  EXPECT_FALSE(runtimeVersionSkew("qwen-chat", {runningPod("a"), runningPod("b")}, current()));
}

TEST(RuntimeVersionSkew, OneTagResolvedToTwoDigestsIsASkewNamingBothAndThePods) {
  Json other = runningPod("c");
  other["status"]["containerStatuses"][0]["imageID"] = "docker.io/vllm/vllm-openai@sha256:bbb";
  auto skew = runtimeVersionSkew("qwen-chat", {runningPod("a"), runningPod("b"), other}, current());
  ASSERT_TRUE(skew);
  EXPECT_EQ(skew->signature,
            "docker.io/vllm/vllm-openai@sha256:aaa|docker.io/vllm/vllm-openai@sha256:bbb");
  EXPECT_EQ(skew->event.type, "Warning");
  EXPECT_EQ(skew->event.reason, "RuntimeVersionSkew");
  EXPECT_THAT(skew->event.message,
              HasSubstr("the running replicas of ModelDeployment team-a/qwen-chat run 2 engine "
                        "builds: docker.io/vllm/vllm-openai@sha256:aaa (role server: Pods a, b); "
                        "docker.io/vllm/vllm-openai@sha256:bbb (role server: Pod c)"));
  EXPECT_THAT(skew->event.message, HasSubstr("spec.engine.image"));
}

TEST(RuntimeVersionSkew, PodsOfAnOlderTemplateTerminatingOrNotRunningAreNotJudged) {
  Json old_template = runningPod("old");
  old_template["metadata"]["annotations"]["kvcache.gpustack.ai/pod-spec-hash"] = "h0";
  old_template["status"]["containerStatuses"][0]["imageID"] = "x@sha256:old";
  Json leaving = runningPod("leaving");
  leaving["metadata"]["deletionTimestamp"] = "2026-12-02T10:00:00Z";
  leaving["status"]["containerStatuses"][0]["imageID"] = "x@sha256:leaving";
  Json pending = runningPod("pending");
  pending["status"]["phase"] = "Pending";
  pending["status"]["containerStatuses"][0]["imageID"] = "x@sha256:pending";
  EXPECT_FALSE(runtimeVersionSkew("qwen-chat", {runningPod("a"), old_template, leaving, pending},
                                  current()));
}

TEST(RuntimeVersionSkew, RolesOnDifferentImagesAreASkewAndTheImageStandsInForAMissingDigest) {
  Json decode = runningPod("d");
  decode["metadata"]["labels"]["app.kubernetes.io/component"] = "decode";
  decode["metadata"]["annotations"]["kvcache.gpustack.ai/pod-spec-hash"] = "h2";
  decode["status"]["containerStatuses"][0]["image"] = "vllm/vllm-openai:v0.10.0";
  decode["status"]["containerStatuses"][0].erase("imageID");
  auto skew = runtimeVersionSkew("qwen-chat", {runningPod("a"), decode}, current());
  ASSERT_TRUE(skew);
  EXPECT_THAT(skew->event.message, HasSubstr("vllm/vllm-openai:v0.10.0 (role decode: Pod d)"));
}

TEST(RuntimeVersionSkew, ManyPodsAreNamedAFewAtATime) {
  std::vector<Json> pods;
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    pods.push_back(runningPod(name));
  }
  Json other = runningPod("z");
  other["status"]["containerStatuses"][0]["imageID"] = "x@sha256:zzz";
  pods.push_back(other);
  auto skew = runtimeVersionSkew("qwen-chat", pods, current());
  ASSERT_TRUE(skew);
  EXPECT_THAT(skew->event.message, HasSubstr("(role server: Pods a, b, c and 2 more)"));
}

TEST(SkewInputsChanged, OnlyWhatTheSkewReadsReJudgesTheDeployment) {
  const Json before = runningPod();
  EXPECT_FALSE(skewInputsChanged(before, before));  // a resync
  Json restarted = runningPod();
  restarted["status"]["containerStatuses"][0]["restartCount"] = 3;
  restarted["status"]["conditions"] = Json::parse(R"([{"type": "Ready", "status": "False"}])");
  EXPECT_FALSE(skewInputsChanged(before, restarted));  // readiness and restarts: no new build
  Json pulled = runningPod();
  pulled["status"]["containerStatuses"][0]["imageID"] = "docker.io/vllm/vllm-openai@sha256:bbb";
  EXPECT_TRUE(skewInputsChanged(before, pulled));
  Json rolled = runningPod();
  rolled["metadata"]["annotations"]["kvcache.gpustack.ai/pod-spec-hash"] = "h2";
  EXPECT_TRUE(skewInputsChanged(before, rolled));
  Json leaving = runningPod();
  leaving["metadata"]["deletionTimestamp"] = "2026-12-02T10:00:00Z";
  EXPECT_TRUE(skewInputsChanged(before, leaving));
  Json pending = runningPod();
  pending["status"]["phase"] = "Pending";
  pending["status"]["containerStatuses"][0]["state"] = Json::parse(R"({"waiting": {}})");
  EXPECT_TRUE(skewInputsChanged(pending, before));  // it starts running
}

}  // namespace
}  // namespace kvc::policy
