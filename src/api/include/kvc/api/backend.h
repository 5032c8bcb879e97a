#pragma once
// KVCacheBackend (worker.gpustack.ai/v1, cluster-scoped): a Mooncake store the operator runs
// (managed) or reaches (external), and what is observed of it (contract §2).
//
// The decoder applies the schema defaults the API server would have applied and refuses wrong
// types with the field's path; spec fields the operator does not read are not modelled.
// backendStatusToJson writes the whole status as the controller reports it: figures that were
// not observed are left out ("absent is not zero").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/condition.h"
#include "kvc/api/meta.h"
#include "kvc/api/reference.h"
#include "kvc/api/status_head.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::api {

inline constexpr std::string_view kKindBackend = "KVCacheBackend";

inline constexpr std::string_view kEndpointClient = "Client";
inline constexpr std::string_view kEndpointAdmin = "Admin";
// On an external KVCacheBackend: the Secret, in the operator's namespace, whose client
// certificate the operator presents to the master's admin endpoint (keys tls.crt, tls.key and
// ca.crt, the CA the endpoint's serving certificate is checked against). Absent: plain HTTP.
inline constexpr std::string_view kAdminTlsSecretAnnotation =
    "kvcache.gpustack.ai/admin-tls-secret";

struct Endpoint {
  std::string name;  // kEndpointClient | kEndpointAdmin
  std::string address;

  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// The address of the endpoint called `name`, or "" when the list has none.
std::string endpointAddress(const std::vector<Endpoint>& endpoints, std::string_view name);

// members[].localDisks[0] (contract §3.7): the group's local disk tier.
struct LocalDisk {
  std::string path;
  std::optional<std::int64_t> capacity_bytes;
  std::optional<std::int64_t> key_limit;
  bool eviction_enabled = true;  // true when the eviction block is absent or omits `enabled`
  std::optional<std::string> eviction_policy;  // FIFO | LRU; the store's FIFO when absent
  std::optional<int> watermark_high;           // percent
  std::optional<int> watermark_low;
  bool clean_after_delete = false;
};

struct MemberGroup {
  std::string medium;              // DRAM | VRAM
  std::string transport_protocol;  // API spelling; "Auto" defers to the backend
  std::string capacity_per_member;
  // What the renderer reads (contract §2.1, §3.5). Kubernetes shapes are kept as the user wrote
  // them: they are copied into the DaemonSet, never interpreted beyond what the store needs.
  Json node_selector = Json::object();
  std::optional<std::string> local_buffer_size;
  std::optional<std::string> image;
  std::int64_t fabric_interface_count = 1;
  std::vector<std::string> extra_args;
  Json extra_env = Json::array();
  std::optional<std::string> runtime_class_name;
  Json host_paths = Json::array();
  Json security_context;  // null when absent
  std::optional<LocalDisk> local_disk;
};

// connection.managed.leader.
struct LeaderSpec {
  std::int64_t replicas = 1;
  std::string election_backend = "Kubernetes";         // Kubernetes | None
  std::string member_addressing = "Service";           // Service | Lease
  std::string allocation_strategy = "FreeRatioFirst";  // Random | FreeRatioFirst
  std::vector<std::string> extra_args;
  Json extra_env = Json::array();
};

// One mounted segment, as status.members[] reports it.
struct BackendMember {
  std::string segment_id;
  std::string client_id;
  std::string segment_name;
  std::string node_name;  // "" when no member Pod matches
  std::string medium;
  std::string protocol;
  std::string state;  // OK, Draining, Drained, GracefullyUnmounting, Unmounting, Undefined, ...

  friend bool operator==(const BackendMember&, const BackendMember&) = default;
};

struct KVCacheBackend {
  ObjectMeta metadata;
  struct Spec {
    std::string type = "Mooncake";
    std::optional<std::string> image;
    std::optional<std::string> image_pull_policy;  // Always | IfNotPresent | Never
    std::vector<std::string> image_pull_secrets;
    std::string transport_protocol = "Auto";  // API spelling
    bool managed = false;
    bool external = false;
    bool multi_tenancy = true;  // managed.leader.multiTenancy
    LeaderSpec leader;
    std::vector<MemberGroup> members;
    std::optional<std::int64_t> scale_in_grace_period_seconds;  // managed.scaleIn
    std::vector<Endpoint> external_endpoints;
  } spec;
  struct Status : StatusHead {
    std::vector<Endpoint> endpoints;
    std::optional<std::int64_t> capacity_total;  // bytes
    std::optional<std::int64_t> capacity_used;   // bytes
    std::vector<BackendMember> members;
    std::vector<ObjectReference> used_by;  // the pools that claim it
  } status;
};

Result<KVCacheBackend> backendFromJson(const Json& object);
Json backendStatusToJson(const KVCacheBackend::Status& status);

// The transports a backend's member groups offer, in artifact spelling, sorted and unique. A
// group's own protocol wins over the backend's unless it is Auto; an external backend offers the
// backend's protocol. Auto resolves to the store's tcp.
std::vector<std::string> offeredTransports(const KVCacheBackend& backend);

}  // namespace kvc::api
