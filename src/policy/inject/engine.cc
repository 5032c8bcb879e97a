#include "kvc/policy/inject/engine.h"

namespace kvc::policy {

std::string_view engineRecordName(Engine engine) {
  switch (engine) {
    case Engine::VLLM:
      return "vllm";
    case Engine::VLLMAscend:
      return "vllm-ascend";
    case Engine::SGLang:
      return "sglang";
  }
  return "vllm";
}

std::string_view engineDisplayName(Engine engine) {
  switch (engine) {
    case Engine::VLLM:
      return "vLLM";
    case Engine::VLLMAscend:
      return "vLLM-Ascend";
    case Engine::SGLang:
      return "SGLang";
  }
  return "vLLM";
}

}  // namespace kvc::policy
