#pragma once
// The engines' own counters of the external KV tier, read from their Prometheus text exposition
// (docs/observability.md cites the files they are defined in):
//   vLLM    vllm:external_prefix_cache_queries_total, vllm:external_prefix_cache_hits_total
//   SGLang  sglang:prompt_tokens_total, and the tokens its storage backend served:
//           sglang:cached_tokens_total{cache_source="storage_<backend>"}
// Both count tokens; each family is summed over its series (one per model, engine or rank).
// Tolerant where the master's parser is strict: values are floats ("1280.0"), other families,
// comments, histograms and `_created` series are skipped, and an unreadable line only fails
// when it is one of ours. Pure.

#include <string>
#include <string_view>

#include "kvc/common/status.h"

namespace kvc::policy {

inline constexpr std::string_view kVllmQueriesMetric = "vllm:external_prefix_cache_queries_total";
inline constexpr std::string_view kVllmHitsMetric = "vllm:external_prefix_cache_hits_total";
inline constexpr std::string_view kSglangQueriesMetric = "sglang:prompt_tokens_total";
inline constexpr std::string_view kSglangHitsMetric = "sglang:cached_tokens_total";
inline constexpr std::string_view kSglangStorageSourcePrefix = "storage_";

struct EngineCounts {
  double queries = 0;  // tokens looked up in the external tier (SGLang: prompt tokens)
  double hits = 0;     // of them, tokens the store served
};

// The counts in `exposition` of `engine` ("vllm" | "sglang"). NotFound when the query family is
// absent (the engine exports no such counter: metrics off, another connector, another version),
// InvalidArgument naming the line when one of our samples is unreadable.
Result<EngineCounts> engineCounts(std::string_view exposition, std::string_view engine);

}  // namespace kvc::policy
