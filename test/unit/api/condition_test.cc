// Conditions set the way meta.SetStatusCondition sets them, and the message bounds of
// contract §1 applied in one place.
#include "kvc/api/condition.h"

#include <gtest/gtest.h>

#include "kvc/api/message.h"
#include "kvc/common/text.h"

namespace kvc::api {
namespace {

constexpr std::string_view kT0 = "2026-12-01T10:00:00Z";
constexpr std::string_view kT1 = "2026-12-01T10:05:00Z";

TEST(SetConditionTest, ANewConditionIsStampedWithTheTimeAndTheGeneration) {
  std::vector<Condition> conditions;
  EXPECT_TRUE(setCondition(
      conditions, makeCondition("QuotaGranted", kConditionTrue, "Granted", "grants 8Gi"), 3, kT0));
  ASSERT_EQ(conditions.size(), 1U);
  EXPECT_EQ(conditions[0].last_transition_time, kT0);
  EXPECT_EQ(conditions[0].observed_generation, 3);
}

TEST(SetConditionTest, TheTransitionTimeIsKeptUnlessTheStatusFlips) {
  std::vector<Condition> conditions;
  (void)setCondition(conditions, makeCondition("A", kConditionTrue, "One", "m1"), 1, kT0);
  // Same status, new reason and message: not a transition.
  EXPECT_TRUE(setCondition(conditions, makeCondition("A", kConditionTrue, "Two", "m2"), 2, kT1));
  EXPECT_EQ(conditions[0].last_transition_time, kT0);
  EXPECT_EQ(conditions[0].reason, "Two");
  EXPECT_EQ(conditions[0].observed_generation, 2);
  // The status flips: now it is.
  EXPECT_TRUE(setCondition(conditions, makeCondition("A", kConditionFalse, "Two", "m2"), 2, kT1));
  EXPECT_EQ(conditions[0].last_transition_time, kT1);
}

TEST(SetConditionTest, AnUnchangedConditionReportsNoChange) {
  std::vector<Condition> conditions;
  (void)setCondition(conditions, makeCondition("A", kConditionTrue, "R", "m"), 1, kT0);
  const std::vector<Condition> before = conditions;
  EXPECT_FALSE(setCondition(conditions, makeCondition("A", kConditionTrue, "R", "m"), 1, kT1));
  EXPECT_EQ(conditions, before);
  // A newer generation evaluated to the same verdict is a change (observedGeneration moves).
  EXPECT_TRUE(setCondition(conditions, makeCondition("A", kConditionTrue, "R", "m"), 2, kT1));
}

TEST(SetConditionTest, PositionsAreKeptAndOtherTypesUntouched) {
  std::vector<Condition> conditions;
  (void)setCondition(conditions, makeCondition("A", kConditionTrue, "R", "a"), 1, kT0);
  (void)setCondition(conditions, makeCondition("B", kConditionTrue, "R", "b"), 1, kT0);
  (void)setCondition(conditions, makeCondition("A", kConditionFalse, "R", "a2"), 1, kT1);
  ASSERT_EQ(conditions.size(), 2U);
  EXPECT_EQ(conditions[0].type, "A");
  EXPECT_EQ(conditions[1].type, "B");
  EXPECT_EQ(conditions[1].message, "b");
}

TEST(SetConditionTest, SetConditionsDropsOwnedTypesThatNoLongerApply) {
  std::vector<Condition> conditions;
  (void)setCondition(conditions, makeCondition("Releasable", kConditionFalse, "R", "held"), 1, kT0);
  (void)setCondition(conditions, makeCondition("Theirs", kConditionTrue, "R", "x"), 1, kT0);
  EXPECT_TRUE(setConditions(conditions, {makeCondition("Ready", kConditionTrue, "R", "ok")},
                            {"Ready", "Releasable"}, 2, kT1));
  ASSERT_EQ(conditions.size(), 2U);
  EXPECT_EQ(findCondition(conditions, "Releasable"), nullptr);
  EXPECT_NE(findCondition(conditions, "Theirs"), nullptr);  // another controller's
  EXPECT_TRUE(isConditionTrue(conditions, "Ready"));
}

TEST(SetConditionTest, EveryMessageIsBoundedTo32KiB) {
  std::vector<Condition> conditions;
  std::string huge(100 * 1024, 'x');
  huge += "é";  // a two-byte character near nothing: the cut must not split one
  (void)setCondition(conditions, makeCondition("A", kConditionFalse, "R", huge), 1, kT0);
  EXPECT_LE(conditions[0].message.size(), kMaxMessageBytes);
  EXPECT_NE(conditions[0].message.find("(truncated)"), std::string::npos);
}

TEST(SetConditionTest, ConditionsRoundTripThroughJson) {
  std::vector<Condition> conditions;
  (void)setCondition(conditions, makeCondition("A", kConditionTrue, "R", "m"), 4, kT0);
  const Json json = conditionsToJson(conditions);
  EXPECT_EQ(json, Json::parse(R"([{"type":"A","status":"True","observedGeneration":4,
      "lastTransitionTime":"2026-12-01T10:00:00Z","reason":"R","message":"m"}])"));
  auto decoded = conditionsFromJson(json, "status.conditions");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, conditions);
  auto bad = conditionsFromJson(Json::parse(R"([{"status":"True"}])"), "status.conditions");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "status.conditions[0].type is required");
}

TEST(MessageBoundsTest, NameListsStopAtTwentyAndSayHowManyMore) {
  EXPECT_EQ(nameList({"a"}), "a");
  EXPECT_EQ(nameList({"a", "b"}), "a and b");
  EXPECT_EQ(nameList({"a", "b", "c"}), "a, b and c");
  std::vector<std::string> many;
  for (int i = 0; i < 25; ++i) {
    many.push_back("p" + std::to_string(i));
  }
  const std::string listed = nameList(many);
  EXPECT_NE(listed.find("p19"), std::string::npos);
  EXPECT_EQ(listed.find("p20"), std::string::npos);
  EXPECT_NE(listed.find(" … and 5 more"), std::string::npos);
}

TEST(MessageBoundsTest, DetailStopsAt2048Runes) {
  std::string detail;
  for (int i = 0; i < 3000; ++i) {
    detail += "ü";  // two bytes, one rune
  }
  const std::string bounded = boundDetail(detail);
  EXPECT_NE(bounded.find("(truncated)"), std::string::npos);
  EXPECT_EQ(runeCount(bounded), kMaxDetailRunes);
  EXPECT_EQ(boundDetail("short"), "short");
}

}  // namespace
}  // namespace kvc::api
