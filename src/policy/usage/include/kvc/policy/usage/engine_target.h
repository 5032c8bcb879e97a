#pragma once
// Where an engine Pod serves its Prometheus metrics: http://<Pod IP>:<port>/metrics, the port
// taken from the engine's container (docs/observability.md, "Per-Binding hit rate"):
//   1. a container port named "metrics";
//   2. else the engine's own --port flag (--port N or --port=N, in command or args);
//   3. else the engine's default: vLLM 8000, SGLang 30000.
// The engine's container is the one annotation kvcache.gpustack.ai/container names, else the
// Pod's only container, else the first. Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "kvc/common/json.h"

namespace kvc::policy {

inline constexpr std::int64_t kVllmDefaultPort = 8000;
inline constexpr std::int64_t kSglangDefaultPort = 30000;

struct EngineTarget {
  std::string engine;  // "vllm" | "sglang"
  std::string url;     // http://10.210.1.7:8000/metrics
};

// The engine of an injection record's "engine" field or a ModelDeployment's spec.engine.name,
// lower-cased: "vllm" or "sglang"; "" for any other.
std::string engineFamily(std::string_view name);

// When the Pod's Ready condition last turned True (RFC 3339; "" when the condition carries no
// time), nullopt while it is not Ready.
std::optional<std::string> readySince(const Json& pod);

// The target of `pod` running `engine` (engineFamily's spelling), or why it has none yet: not
// Ready, no Pod IP, a port out of range. Only a Ready Pod is read: an engine serves /metrics
// once its model is loaded, which is when it turns Ready.
std::variant<EngineTarget, std::string> engineMetricsTarget(const Json& pod,
                                                            std::string_view engine);

}  // namespace kvc::policy
