#pragma once
// ModelDeployment (worker.gpustack.ai/v1, namespaced): the roles of one inference engine serving
// one model, optionally attached to a shared KV cache through a KVCachePoolBinding in the same
// namespace (contract §8; condition types in model_deployment_conditions.h).
//
// The decoder applies the schema defaults the API server would have applied (roles[].kind Server,
// replicas 1, size 1, ports[].protocol TCP, kvCache.connector Mooncake), so a manifest read from
// a file decodes like the object read back from the API server. Wrong types and values outside a
// schema enum are refused with the field's path. modelDeploymentStatusToJson writes the whole
// status as the controller reports it: figures that were not observed are left out ("absent is
// not zero").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/condition.h"
#include "kvc/api/meta.h"
#include "kvc/api/status_head.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::api {

inline constexpr std::string_view kKindModelDeployment = "ModelDeployment";

// spec.engine.name.
inline constexpr std::string_view kEngineVLLM = "vLLM";
inline constexpr std::string_view kEngineSGLang = "SGLang";

// spec.roles[].kind.
inline constexpr std::string_view kRoleKindServer = "Server";
inline constexpr std::string_view kRoleKindPrefill = "Prefill";
inline constexpr std::string_view kRoleKindDecode = "Decode";

// spec.kvCache.connector: the default and the only value; no code reads it.
inline constexpr std::string_view kConnectorMooncake = "Mooncake";
// spec.roles[].ports[].protocol default.
inline constexpr std::string_view kPortProtocolTCP = "TCP";

struct ModelEngine {
  std::string name;                    // kEngineVLLM | kEngineSGLang
  std::optional<std::string> version;  // free-form; editable
  std::optional<std::string> image;    // every role's image unless the role names its own

  friend bool operator==(const ModelEngine&, const ModelEngine&) = default;
};

// spec.kvCache; the whole block is frozen.
struct KVCacheAttachment {
  std::string pool_ref;  // poolRef.name: a KVCachePoolBinding in the same namespace
  std::string connector = std::string(kConnectorMooncake);

  friend bool operator==(const KVCacheAttachment&, const KVCacheAttachment&) = default;
};

// roles[].resources: what one Pod asks of an accelerator.
struct RoleResources {
  std::optional<std::string> accelerator;       // cards per Pod, a quantity as written
  std::optional<std::int64_t> interface_count;  // `interface`: host-fabric interfaces per Pod

  friend bool operator==(const RoleResources&, const RoleResources&) = default;
};

// roles[].env[]. The schema declares name and value only (no valueFrom: the API server prunes it).
struct RoleEnvVar {
  std::string name;
  std::string value;

  friend bool operator==(const RoleEnvVar&, const RoleEnvVar&) = default;
};

struct RolePort {
  std::int64_t port = 0;
  std::string protocol = std::string(kPortProtocolTCP);  // TCP | UDP | SCTP

  friend bool operator==(const RolePort&, const RolePort&) = default;
};

struct RoleHostPath {
  std::string path;
  std::optional<std::string> type;  // "" | DirectoryOrCreate | Directory | FileOrCreate | ...

  friend bool operator==(const RoleHostPath&, const RoleHostPath&) = default;
};

// roles[].additionalVolumes[]: one mount and its source (configMap, secret or hostPath).
struct RoleVolume {
  std::string mount_path;
  std::optional<bool> read_only;
  std::optional<std::string> sub_path;
  std::optional<std::string> config_map;  // configMap.name
  std::optional<std::string> secret;      // secret.name
  std::optional<RoleHostPath> host_path;

  friend bool operator==(const RoleVolume&, const RoleVolume&) = default;
};

struct ModelDeploymentRole {
  std::string name;                                 // a DNS label; the key of spec.roles
  std::string kind = std::string(kRoleKindServer);  // Server | Prefill | Decode; frozen
  std::int64_t replicas = 1;                        // serving instances; editable
  std::int64_t size = 1;                            // Pods per serving instance; frozen
  std::optional<std::string> instance_type;         // null in the walkthrough; frozen
  RoleResources resources;                          // frozen
  // Take-over: present means the whole argv is the user's; no engine args or client env are
  // synthesised, and extra_args / env are ignored. Frozen.
  std::optional<std::vector<std::string>> command;
  std::vector<std::string> extra_args;  // appended after the operator's arguments
  std::vector<RoleEnvVar> env;          // appended after the operator's variables
  // The Pod overlay (editable).
  std::optional<std::string> image;              // wins over spec.engine.image
  std::optional<std::string> image_pull_policy;  // Always | IfNotPresent | Never
  std::vector<std::string> image_pull_secrets;   // Secret names
  std::optional<bool> privileged;
  std::vector<RolePort> ports;
  std::vector<RoleVolume> additional_volumes;
  std::optional<std::int64_t> termination_grace_period_seconds;

  friend bool operator==(const ModelDeploymentRole&, const ModelDeploymentRole&) = default;
};

// spec.router: an optional request router in front of the roles.
struct ModelRouter {
  std::optional<std::int64_t> replicas;
  std::vector<std::string> extra_args;

  friend bool operator==(const ModelRouter&, const ModelRouter&) = default;
};

// status.kvCache.domain: the Binding's reuse domain, echoed.
struct AttachedDomain {
  std::string name;
  std::optional<std::int64_t> block_size;
  std::string dtype;

  friend bool operator==(const AttachedDomain&, const AttachedDomain&) = default;
};

// status.kvCache: echo of the resolved attachment.
struct KVCacheAttachmentStatus {
  std::string binding;  // "" = not resolved
  std::string pool;
  std::optional<AttachedDomain> domain;

  friend bool operator==(const KVCacheAttachmentStatus&, const KVCacheAttachmentStatus&) = default;
};

// status.roles[].
struct ModelDeploymentRoleStatus {
  std::string name;
  std::string kind;
  std::optional<std::int64_t> replicas;
  std::optional<std::int64_t> ready_replicas;
  std::optional<std::int64_t> updated_replicas;
  std::optional<bool> unmanaged;  // true when the role takes over the command line

  friend bool operator==(const ModelDeploymentRoleStatus&,
                         const ModelDeploymentRoleStatus&) = default;
};

struct ModelDeployment {
  ObjectMeta metadata;
  struct Spec {
    std::string model_name;  // spec.model.name; frozen
    ModelEngine engine;
    std::optional<KVCacheAttachment> kv_cache;        // absent: no shared cache
    std::optional<std::string> kv_transfer_protocol;  // spec.kvTransfer.protocol; unset renders tcp
    std::vector<ModelDeploymentRole> roles;
    std::optional<ModelRouter> router;

    friend bool operator==(const Spec&, const Spec&) = default;
  } spec;
  struct Status : StatusHead {  // phase: Starting | Ready | Degraded | Deleting
    std::string endpoint;       // "" = not published
    std::optional<KVCacheAttachmentStatus> kv_cache;
    std::vector<ModelDeploymentRoleStatus> roles;
  } status;
};

Result<ModelDeployment> modelDeploymentFromJson(const Json& object);
Json modelDeploymentStatusToJson(const ModelDeployment::Status& status);

}  // namespace kvc::api
