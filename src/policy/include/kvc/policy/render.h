#pragma once
// The client configuration each engine is given (seed "Injection per engine"; contract §7.5).
//
// One renderer for every path that configures an engine: Pod injection now, ModelDeployment
// rendering later. The values are the same on every engine; only the vehicle and the spellings
// differ: a projected JSON file plus --kv-transfer-config on the vLLM family, MOONCAKE_*
// variables plus --hicache-storage-backend on SGLang.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/settings.h"
#include "kvc/common/json.h"
#include "kvc/policy/engine.h"
#include "kvc/policy/resolve.h"

namespace kvc::policy {

struct EnvVar {
  std::string name;
  std::string value;
  std::string field_path;  // when set, the value comes from this fieldRef instead

  Json toJson() const;
};

struct ClientRender {
  std::string_view vehicle;                  // "file" | "environment"
  std::vector<EnvVar> env;                   // written over any same-named entry, in place
  std::vector<EnvVar> env_defaults;          // written only where the container does not set them
  std::vector<std::string> args;             // appended after the container's own args
  std::optional<std::string> client_config;  // the projected file's JSON (vLLM family)
};

// `hierarchicalCacheNamed`: the container's own arguments already name
// --enable-hierarchical-cache (SGLang), so the switch is not appended again.
ClientRender renderClient(Engine engine, Role role, const Resolution& resolution,
                          const api::Settings& settings, bool hierarchical_cache_named);

// The compact JSON of the vLLM file vehicle, keys in the contract's order.
std::string renderClientConfigJson(const Resolution& resolution);

// The compact JSON of --kv-transfer-config.
std::string renderKVTransferConfig(Engine engine, Role role);

}  // namespace kvc::policy
