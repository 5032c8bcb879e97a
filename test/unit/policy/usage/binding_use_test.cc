#include "kvc/policy/usage/binding_use.h"

#include <gtest/gtest.h>

namespace kvc::policy {
namespace {

EnginePodUse pod(std::string name, std::int64_t ready_seconds,
                 std::optional<EngineCounts> counts = std::nullopt, std::string unread = "") {
  return EnginePodUse{std::move(name), "vllm", ready_seconds, counts, std::move(unread)};
}

std::string verdict(const api::Condition& c) { return c.status + "/" + c.reason; }

api::Condition judge(const BindingUse& use, std::optional<std::int64_t> holdings) {
  return cacheUsed(use, holdings, "chat", "team-a", "chat");
}

TEST(HitRate, TheContractsFormat) {
  EXPECT_EQ(hitRateText(0), "0");
  EXPECT_EQ(hitRateText(1), "1");
  EXPECT_EQ(hitRateText(0.8), "0.8");
  EXPECT_EQ(hitRateText(1024.0 / 1280.0), "0.8");
  EXPECT_EQ(hitRateText(0.12345), "0.1235");  // rounded to four decimals
  EXPECT_EQ(hitRateText(0.00004), "0");
  EXPECT_EQ(hitRateText(0.99996), "1");
  EXPECT_EQ(hitRateText(0.05), "0.05");
  EXPECT_EQ(hitRateText(1.5), "1");  // clamped
}

TEST(HitRate, SumsOverThePodsReadAbsentWhenNothingCounted) {
  BindingUse use;
  EXPECT_EQ(hitRate(use), std::nullopt);  // no Pod
  use.pods = {pod("a", 5, EngineCounts{1000, 800}), pod("b", 5, EngineCounts{1000, 0}),
              pod("c", 5, std::nullopt, "GET http://x: refused")};
  EXPECT_EQ(hitRate(use), "0.4");
  use.pods = {pod("a", 5, EngineCounts{0, 0})};
  EXPECT_EQ(hitRate(use), std::nullopt);  // read, but 0 queries: no rate (absent is not zero)
  use.pods = {pod("a", 5, EngineCounts{10, 0})};
  EXPECT_EQ(hitRate(use), "0");  // read, queried, nothing hit: zero
  use.reading = false;
  EXPECT_EQ(hitRate(use), std::nullopt);
}

TEST(CacheUsed, TrueWhenTheDomainHoldsDataOrThePodsReportLookups) {
  BindingUse use;
  use.pods = {pod("a", 3600)};
  EXPECT_EQ(verdict(judge(use, 4096)), "True/TenantHoldsData");
  use.pods = {pod("a", 3600, EngineCounts{128, 0})};
  EXPECT_EQ(verdict(judge(use, 0)), "True/QueriesReported");
  EXPECT_EQ(verdict(judge(use, std::nullopt)), "True/QueriesReported");
}

TEST(CacheUsed, UnknownUntilAPodHasBeenReadyForTheWindow) {
  BindingUse use;
  EXPECT_EQ(verdict(judge(use, 0)), "Unknown/NoEnginePods");
  use.pods = {pod("a", 599), pod("b", 10)};
  const api::Condition awaiting = judge(use, 0);
  EXPECT_EQ(verdict(awaiting), "Unknown/AwaitingUse");
  EXPECT_EQ(awaiting.message,
            "2 engine Pods Ready, nothing cached yet under the reuse domain \"chat\"; judged once "
            "a Pod has been Ready for 10m (Setting kv-cache-unused-after)");
  EXPECT_EQ(verdict(judge(use, std::nullopt)), "Unknown/UsageNotObserved");
}

TEST(CacheUsed, FalseAfterTheWindowWithNothingHeldAndNoLookup) {
  BindingUse use;
  use.unused_after = std::chrono::seconds(20);
  use.pods = {pod("a", 25, EngineCounts{0, 0}),
              pod("b", 21, std::nullopt, "GET http://10.210.1.7:8000/metrics: refused"),
              pod("c", 5)};
  const api::Condition unused = judge(use, 0);
  EXPECT_EQ(verdict(unused), "False/NothingCached");
  EXPECT_EQ(
      unused.message,
      "Pod/a and Pod/b Ready for 20s or more, yet the reuse domain \"chat\" holds nothing and "
      "no engine Pod reports a lookup in the store; 1 of 3 engine Pods read (Pod/b: GET "
      "http://10.210.1.7:8000/metrics: refused). Likely causes: an engine image with no "
      "reader for the injected configuration, a launch that drops the connector flag, a "
      "store client the master refuses, or no traffic. Check: kvcache probe -n team-a "
      "--binding chat, and the KVCacheUnused Event on each Pod");
  ASSERT_EQ(unusedPods(use).size(), 2u);
  EXPECT_EQ(unusedPods(use)[1]->name, "b");
  use.reading = false;
  EXPECT_NE(judge(use, 0).message.find("the engines' counters are not read (Setting "
                                       "kv-cache-engine-metrics is \"false\")"),
            std::string::npos);
}

TEST(CacheUsed, TheEventNamesTheEnginesCheck) {
  const std::string vllm = cacheUnusedNote(pod("chat-0", 660), "chat", "team-a", "chat");
  EXPECT_NE(vllm.find("Ready 11m, yet the reuse domain \"chat\" of KVCachePoolBinding team-a/chat"),
            std::string::npos)
      << vllm;
  EXPECT_NE(vllm.find("kubectl exec chat-0 -- python3 -c \"import "
                      "vllm.distributed.kv_transfer.kv_connector.v1.mooncake.store.worker; "
                      "print('reader present')\""),
            std::string::npos)
      << vllm;
  EnginePodUse sglang = pod("sg-0", 3600);
  sglang.engine = "sglang";
  const std::string note = cacheUnusedNote(sglang, "chat", "team-a", "chat");
  EXPECT_NE(note.find("kubectl exec sg-0 -- env | grep MOONCAKE"), std::string::npos) << note;
  EXPECT_LE(note.size(), 1024u);
  EXPECT_LE(vllm.size(), 1024u);
}

TEST(CacheUsed, SettledOnceTheReaderHasBeenToEveryPod) {
  BindingUse use;
  EXPECT_TRUE(settled(use));
  use.pods = {pod("a", 5), pod("b", 5)};
  use.pods[0].visited = true;
  EXPECT_FALSE(settled(use));  // b not reached yet: it would read as silent
  use.pods[1].visited = true;
  EXPECT_TRUE(settled(use));
  use.pods[1].visited = false;
  use.reading = false;
  EXPECT_TRUE(settled(use));  // nothing is read: nothing to wait for
}

TEST(Duration, AsTheSettingSpellsIt) {
  EXPECT_EQ(durationText(std::chrono::seconds(600)), "10m");
  EXPECT_EQ(durationText(std::chrono::seconds(90)), "1m30s");
  EXPECT_EQ(durationText(std::chrono::seconds(5400)), "1h30m");
  EXPECT_EQ(durationText(std::chrono::seconds(0)), "0s");
}

}  // namespace
}  // namespace kvc::policy
