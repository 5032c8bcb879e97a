// The small decisions around a managed store's life: the leader handover Event (a baseline first,
// a holderless Lease changes nothing), the disk tier's cleanup (its result message, which paths
// overlap, the Pod it runs, the Nodes it runs on), and what a Pod's status says is wrong with it.
// The backend's whole status is golden-tested (test/golden/quota/managed-backend-status).
#include <gtest/gtest.h>

#include "kvc/policy/store/leader_handover.h"
#include "kvc/policy/store/pod_faults.h"
#include "kvc/policy/store/tier_cleanup.h"

namespace kvc::policy {
namespace {

TEST(LeaderHandover, TheFirstHolderSeenIsOnlyABaseline) {
  HandoverBaseline baseline;
  EXPECT_FALSE(leaderHandover(baseline, "leader-a", 0));
  EXPECT_FALSE(leaderHandover(baseline, "leader-a", 0));  // a renewal
  auto message = leaderHandover(baseline, "leader-b", 1);
  ASSERT_TRUE(message);
  EXPECT_NE(message->find("1 time"), std::string::npos) << *message;
  EXPECT_EQ(message->find("leader-"), std::string::npos) << "names no replica: " << *message;
}

TEST(LeaderHandover, AHolderlessLeaseKeepsTheLastHolderAsBaseline) {
  HandoverBaseline baseline;
  EXPECT_FALSE(leaderHandover(baseline, "leader-a", 0));
  EXPECT_FALSE(leaderHandover(baseline, "", 0));          // released on shutdown
  EXPECT_FALSE(leaderHandover(baseline, "leader-a", 0));  // the same one back: no handover
  EXPECT_TRUE(leaderHandover(baseline, "leader-c", 2));
}

TEST(TierCleanup, ResultMessageRoundTrips) {
  EXPECT_EQ(formatTierCleanup({12, 0}), "removed=12 remaining=0");
  EXPECT_EQ(parseTierCleanup("removed=12 remaining=0\n"), (TierCleanupResult{12, 0}));
  EXPECT_EQ(parseTierCleanup("removed=0 remaining=-1"), (TierCleanupResult{0, -1}));
  EXPECT_FALSE(parseTierCleanup("rm: cannot remove"));
  EXPECT_FALSE(parseTierCleanup("removed=1"));
  EXPECT_FALSE(parseTierCleanup("removed=1 remaining=2 more"));
}

TEST(TierCleanup, PathsOverlapByWholeComponents) {
  EXPECT_TRUE(tierPathsOverlap("/var/lib/kvcache", "/var/lib/kvcache/"));
  EXPECT_TRUE(tierPathsOverlap("/var/lib/kvcache", "/var/lib/kvcache/a"));
  EXPECT_TRUE(tierPathsOverlap("/var/lib/kvcache/a", "/var/lib"));
  EXPECT_FALSE(tierPathsOverlap("/var/lib/kvcache", "/var/lib/kvcache2"));
  EXPECT_FALSE(tierPathsOverlap("/data/a", "/data/b"));
}

api::KVCacheBackend tieredBackend() {
  auto decoded = api::backendFromJson(Json::parse(R"({"metadata": {"name": "disk", "uid": "u"},
    "spec": {"connection": {"managed": {"leader": {}, "members": [
      {"nodeSelector": {"kvcache": "true", "type": "real"}, "medium": "DRAM",
       "capacityPerMember": "1Gi",
       "securityContext": {"runAsUser": 1000},
       "localDisks": [{"path": "/var/lib/kvcache", "cleanAfterDelete": true}]}]}}}})"));
  EXPECT_TRUE(decoded.ok()) << decoded.status().message();
  return *decoded;
}

TEST(TierCleanup, OnePodPerNodeEmptiesTheTierAsTheMembersUser) {
  const api::KVCacheBackend backend = tieredBackend();
  auto pod = tierCleanupPod(backend, 0, "real-node-0", {"gpustack-system", "store:1"});
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ((*pod)["metadata"]["namespace"], "gpustack-system");
  EXPECT_EQ((*pod)["metadata"]["labels"]["app.kubernetes.io/component"], "tier-clean-0");
  EXPECT_EQ((*pod)["spec"]["nodeName"], "real-node-0");
  EXPECT_EQ((*pod)["spec"]["restartPolicy"], "Never");
  EXPECT_EQ((*pod)["spec"]["activeDeadlineSeconds"], kTierCleanupDeadlineSeconds);
  const Json& container = (*pod)["spec"]["containers"][0];
  EXPECT_EQ(container["command"],
            Json::parse(R"(["kvcache", "store", "clean", "--path", "/var/lib/kvcache"])"));
  EXPECT_EQ(container["securityContext"]["runAsUser"], 1000);
  // Hardened like the members: nothing it does needs a capability or a writable root.
  EXPECT_EQ(container["securityContext"]["readOnlyRootFilesystem"], true);
  EXPECT_EQ(container["securityContext"]["capabilities"]["drop"], Json::array({"ALL"}));
  EXPECT_EQ((*pod)["spec"]["securityContext"]["runAsNonRoot"], true);
  EXPECT_EQ((*pod)["spec"]["automountServiceAccountToken"], false);
  EXPECT_EQ((*pod)["spec"]["volumes"][0]["hostPath"]["type"], "Directory");
  // One name per node, whatever the node is called.
  auto other = tierCleanupPod(backend, 0, "real-node-1", {"gpustack-system", "store:1"});
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*pod)["metadata"]["name"], (*other)["metadata"]["name"]);
  EXPECT_EQ(nodeSelectorQuery(backend.spec.members[0]), "kvcache=true,type=real");
}

TEST(TierCleanup, NoImageAnywhereIsAnError) {
  auto pod = tierCleanupPod(tieredBackend(), 0, "n", {"gpustack-system", ""});
  EXPECT_FALSE(pod.ok());
}

Json podWith(const char* status) {
  Json pod = Json::parse(status);
  pod["metadata"]["name"] = "p";
  return pod;
}

TEST(PodFaults, ANormalStartIsNoFault) {
  EXPECT_FALSE(podFault(podWith(R"({"status": {"containerStatuses": [
      {"name": "c", "ready": false, "restartCount": 0,
       "state": {"waiting": {"reason": "ContainerCreating"}}}]}})")));
  EXPECT_FALSE(podFault(podWith(R"({"status": {"initContainerStatuses": [
      {"name": "i", "ready": false, "restartCount": 0,
       "state": {"terminated": {"exitCode": 0}}}], "containerStatuses": [
      {"name": "c", "ready": true, "restartCount": 2,
       "lastState": {"terminated": {"exitCode": 1}}, "state": {"running": {}}}]}})")))
      << "a container that restarted once and is ready again is no fault";
}

TEST(PodFaults, TheFirstThatAppliesWins) {
  auto unschedulable = podFault(podWith(R"({"status": {"conditions": [
      {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
       "message": "0/2 nodes"}]}})"));
  ASSERT_TRUE(unschedulable);
  EXPECT_EQ(unschedulable->kind, PodFault::Kind::Unschedulable);
  auto crash = podFault(podWith(R"({"status": {"containerStatuses": [
      {"name": "member", "ready": false, "restartCount": 3,
       "lastState": {"terminated": {"exitCode": 1, "message": "no write permission\n"}},
       "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}})"));
  ASSERT_TRUE(crash);
  EXPECT_EQ(crash->kind, PodFault::Kind::CrashLooping);
  EXPECT_EQ(describePodFault(*crash),
            "Pod p: container member restarted 3 times, last exit code 1: no write permission");
  auto pull = podFault(podWith(R"({"status": {"containerStatuses": [
      {"name": "member", "ready": false, "restartCount": 0,
       "state": {"waiting": {"reason": "ImagePullBackOff", "message": "not found"}}}]}})"));
  ASSERT_TRUE(pull);
  EXPECT_EQ(pull->kind, PodFault::Kind::Waiting);
  EXPECT_EQ(pull->reason, "ImagePullBackOff");
  EXPECT_FALSE(podFault(podWith(R"({"metadata": {"deletionTimestamp": "x"}, "status": {
      "containerStatuses": [{"name": "c", "ready": false, "restartCount": 0,
       "state": {"waiting": {"reason": "ErrImagePull"}}}]}})")))
      << "a deleting Pod is on its way out, not at fault";
}

}  // namespace
}  // namespace kvc::policy
