#include "kvc/policy/usage/engine_counts.h"

#include <gtest/gtest.h>

namespace kvc::policy {
namespace {

// What prometheus_client writes for vLLM 0.29 (two engines), with a histogram around it.
constexpr std::string_view kVllm = R"(# HELP vllm:external_prefix_cache_queries_total External.
# TYPE vllm:external_prefix_cache_queries_total counter
vllm:external_prefix_cache_queries_total{engine="0",model_name="qwen"} 1280.0
vllm:external_prefix_cache_queries_total{engine="1",model_name="qwen"} 720.0
# TYPE vllm:external_prefix_cache_queries_created gauge
vllm:external_prefix_cache_queries_created{engine="0",model_name="qwen"} 1.7e+09
vllm:external_prefix_cache_hits_total{engine="0",model_name="qwen"} 1024.0
vllm:external_prefix_cache_hits_total{engine="1",model_name="qwen"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="qwen"} 12.0
)";

TEST(EngineCounts, VllmSumsEverySeries) {
  auto counts = engineCounts(kVllm, "vllm");
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ(counts->queries, 2000);
  EXPECT_EQ(counts->hits, 1024);
}

TEST(EngineCounts, SglangCountsOnlyItsStorageBackendsHits) {
  constexpr std::string_view text =
      "sglang:prompt_tokens_total{model_name=\"m\"} 1280\r\n"
      "sglang:cached_tokens_total{cache_source=\"device\",model_name=\"m\"} 512\r\n"
      "sglang:cached_tokens_total{model_name=\"m\",cache_source=\"storage_MooncakeStore\"} 256\n";
  auto counts = engineCounts(text, "sglang");
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ(counts->queries, 1280);
  EXPECT_EQ(counts->hits, 256);
}

TEST(EngineCounts, NoQueryCounterIsNotFound) {
  auto counts = engineCounts("process_cpu_seconds_total 12.5\n", "vllm");
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.status().code(), StatusCode::NotFound);
  EXPECT_EQ(counts.status().message(), "no vllm:external_prefix_cache_queries_total series");
  // Another engine's counters are not ours.
  EXPECT_FALSE(engineCounts(kVllm, "sglang").ok());
}

TEST(EngineCounts, AnUnreadableSampleOfOursFailsOthersAreSkipped) {
  EXPECT_TRUE(
      engineCounts("other{a=\"b\" garbage\nvllm:external_prefix_cache_queries_total 1\n", "vllm")
          .ok());
  for (const char* line : {"vllm:external_prefix_cache_queries_total{engine=\"0\" 5",
                           "vllm:external_prefix_cache_queries_total NaN",
                           "vllm:external_prefix_cache_queries_total -3",
                           "vllm:external_prefix_cache_queries_total"}) {
    auto counts = engineCounts(line, "vllm");
    ASSERT_FALSE(counts.ok()) << line;
    EXPECT_EQ(counts.status().code(), StatusCode::InvalidArgument) << line;
  }
}

}  // namespace
}  // namespace kvc::policy
