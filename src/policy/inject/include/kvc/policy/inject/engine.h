#pragma once
// The engines the webhook configures. Only vLLM and SGLang can be named; vLLM-Ascend is derived
// from `engine: vLLM` plus `manufacturer: ascend`.

#include <string_view>

namespace kvc::policy {

enum class Engine { VLLM, VLLMAscend, SGLang };

// The internal value written to the injection record: "vllm", "vllm-ascend", "sglang".
std::string_view engineRecordName(Engine engine);

// The spelling a user writes or recognises: "vLLM", "vLLM-Ascend", "SGLang".
std::string_view engineDisplayName(Engine engine);

inline bool isVLLMFamily(Engine engine) { return engine != Engine::SGLang; }

enum class Role { None, Prefill, Decode };

}  // namespace kvc::policy
