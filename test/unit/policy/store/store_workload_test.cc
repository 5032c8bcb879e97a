// The small decisions of the managed store's renderers (the rendered sets are golden-tested in
// test/golden/store): pull-policy resolution, image precedence, the two-step rise, the hash,
// and the tier survey's termination message.
#include <gtest/gtest.h>

#include "kvc/policy/store/store_leader.h"
#include "kvc/policy/store/store_member.h"
#include "kvc/policy/store/store_workload.h"
#include "kvc/policy/store/tier_survey.h"

namespace kvc::policy {
namespace {

api::KVCacheBackend backend(std::int64_t replicas = 1) {
  auto decoded = api::backendFromJson(Json::parse(R"({"metadata": {"name": "b"},
    "spec": {"connection": {"managed": {"leader": {}, "members": [
      {"nodeSelector": {"a": "b"}, "medium": "DRAM", "capacityPerMember": "1Gi"}]}}}})"));
  EXPECT_TRUE(decoded.ok()) << decoded.status().message();
  decoded->spec.leader.replicas = replicas;
  return *decoded;
}

TEST(PullPolicy, ResolvesFromTheTagUnlessSet) {
  const api::KVCacheBackend b = backend();
  EXPECT_EQ(pullPolicyFor(b, "store:1.0"), "IfNotPresent");
  EXPECT_EQ(pullPolicyFor(b, "store:latest"), "Always");
  EXPECT_EQ(pullPolicyFor(b, "store"), "Always");
  EXPECT_EQ(pullPolicyFor(b, "registry:5000/store"), "Always");  // a port is not a tag
  EXPECT_EQ(pullPolicyFor(b, "registry:5000/store:2"), "IfNotPresent");
  EXPECT_EQ(pullPolicyFor(b, "store@sha256:abcd"), "IfNotPresent");
  api::KVCacheBackend pinned = b;
  pinned.spec.image_pull_policy = "Never";
  EXPECT_EQ(pullPolicyFor(pinned, "store:latest"), "Never");
}

TEST(StoreImage, GroupThenBackendThenSetting) {
  api::KVCacheBackend b = backend();
  const StoreInputs inputs{"ns", "setting:1"};
  EXPECT_EQ(*storeImage(b, 0, inputs), "setting:1");
  b.spec.image = "backend:1";
  EXPECT_EQ(*storeImage(b, 0, inputs), "backend:1");
  b.spec.members[0].image = "group:1";
  EXPECT_EQ(*storeImage(b, 0, inputs), "group:1");
  EXPECT_EQ(*storeImage(b, std::nullopt, inputs), "backend:1");  // the leader has no group
}

Json liveLeader(bool elects, std::int64_t replicas, std::int64_t updated,
                std::int64_t observed = 3) {
  Json args = elects ? Json::array({"--lease=ns/b-leader", "--"}) : Json::array({"--"});
  return {
      {"metadata", {{"generation", 3}}},
      {"spec",
       {{"replicas", replicas},
        {"template", {{"spec", {{"containers", {{{"name", "leader"}, {"args", args}}}}}}}}}},
      {"status",
       {{"observedGeneration", observed}, {"replicas", replicas}, {"updatedReplicas", updated}}}};
}

TEST(LeaderReplicas, RisesInTwoSteps) {
  const api::KVCacheBackend b = backend(3);
  EXPECT_EQ(leaderReplicasNow(b, StoreInputs{}, Json()), 1);                     // nothing yet
  EXPECT_EQ(leaderReplicasNow(b, StoreInputs{}, liveLeader(false, 1, 1)), 1);    // not electing yet
  EXPECT_EQ(leaderReplicasNow(b, StoreInputs{}, liveLeader(true, 1, 0)), 1);     // rolling out
  EXPECT_EQ(leaderReplicasNow(b, StoreInputs{}, liveLeader(true, 1, 1, 2)), 1);  // not observed
  EXPECT_EQ(leaderReplicasNow(b, StoreInputs{}, liveLeader(true, 1, 1)), 3);     // then standbys
  EXPECT_EQ(leaderReplicasNow(b, StoreInputs{}, liveLeader(true, 3, 1)), 3);     // never back down
  api::KVCacheBackend none = backend(3);
  none.spec.leader.election_backend = "None";
  EXPECT_EQ(leaderReplicasNow(none, StoreInputs{}, liveLeader(true, 1, 1)),
            1);  // None clamps to one
}

TEST(PodSpecHash, IgnoresTheNodeSelectorAndItself) {
  auto rendered = memberDaemonSet(backend(), 0, {"ns", "img:1"});
  ASSERT_TRUE(rendered.ok()) << rendered.status().message();
  Json tmpl = (*rendered)["spec"]["template"];
  const std::string hash = podSpecHash(tmpl);
  tmpl["spec"]["nodeSelector"] = {{"other", "node"}};
  EXPECT_EQ(podSpecHash(tmpl), hash);
  tmpl["spec"]["containers"][0]["image"] = "img:2";
  EXPECT_NE(podSpecHash(tmpl), hash);
}

TEST(MemberDaemonSet, NamesTheFieldOfABadQuantity) {
  api::KVCacheBackend b = backend();
  b.spec.members[0].capacity_per_member = "lots";
  auto rendered = memberDaemonSet(b, 0, {"ns", "img:1"});
  ASSERT_FALSE(rendered.ok());
  EXPECT_NE(rendered.status().message().find("members[0].capacityPerMember"), std::string::npos);
}

TEST(TierSurvey, RoundTripsAndRejectsAnythingElse) {
  EXPECT_EQ(formatTierSurvey({0, 17}), "entries=0 control=17");
  EXPECT_EQ(parseTierSurvey("entries=3 control=17\n"), (TierSurvey{3, 17}));
  EXPECT_EQ(parseTierSurvey("entries=-1 control=17"), (TierSurvey{-1, 17}));
  for (const char* bad : {"", "entries=3", "entries=x control=1", "entries=1 control=2 more",
                          "entries=-2 control=1", "panic: no write permission"}) {
    EXPECT_FALSE(parseTierSurvey(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace kvc::policy
