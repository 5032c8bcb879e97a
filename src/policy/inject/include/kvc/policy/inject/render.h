#pragma once
// The client configuration each engine is given (seed "Injection per engine"; contract §7.5).
//
// One renderer for every path that configures an engine: Pod injection (inject.h) and the roles
// of a ModelDeployment (model_deployment_render.h) both call renderClient, so an engine Pod
// carries the same configuration whichever path wrote it. The values are the same on every
// engine; only the vehicle and the spellings differ: a projected JSON file plus
// --kv-transfer-config on the vLLM family, MOONCAKE_* variables plus --hicache-storage-backend on
// SGLang. What differs between the two callers (the Pod path's in-place env merge; a
// ModelDeployment's role kinds, MC_FORCE_TCP and decode-retraction switch) stays with the caller.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/settings.h"
#include "kvc/common/json.h"
#include "kvc/policy/inject/engine.h"
#include "kvc/policy/inject/resolve.h"

namespace kvc::policy {

struct EnvVar {
  std::string name;
  std::string value;
  std::string field_path;  // when set, the value comes from this fieldRef instead

  Json toJson() const;
};

struct ClientRender {
  std::string_view vehicle;          // "file" | "environment"
  std::vector<EnvVar> env;           // the Binding's answer: one entry per name
  std::vector<EnvVar> env_defaults;  // written only where the container does not set them
  std::vector<std::string> args;     // appended after the container's own args
  // The file vehicle (vLLM family; all three absent on SGLang): the JSON the Pod carries as the
  // kvcache.gpustack.ai/client-config annotation, the Pod's downwardAPI volume projecting that
  // annotation as mooncake.json, and the container's read-only mount of it.
  std::optional<std::string> client_config;
  std::optional<Json> volume;
  std::optional<Json> mount;
};

// `host_tier_switch`: on SGLang, append --enable-hierarchical-cache after the injected arguments
// (the storage backend hangs off that host tier). The caller decides: Pod injection unless the
// container already names the switch, a ModelDeployment also never on a Decode role.
ClientRender renderClient(Engine engine, Role role, const Resolution& resolution,
                          const api::Settings& settings, bool host_tier_switch);

// The compact JSON of the vLLM file vehicle, keys in the contract's order.
std::string renderClientConfigJson(const Resolution& resolution);

// The compact JSON of --kv-transfer-config.
std::string renderKVTransferConfig(Engine engine, Role role);

}  // namespace kvc::policy
