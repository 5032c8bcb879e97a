#pragma once
// The three KV-cache kinds of worker.gpustack.ai/v1, as far as the operator reads them.
//
// Decoders take the JSON the API server (or a cluster file) holds, apply the schema defaults the
// API server would have applied, and refuse wrong types with the field's path. Fields we do not
// read are not modelled; the JSON stays the source of truth for writing.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvc/api/meta.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::api {

inline constexpr std::string_view kKindBackend = "KVCacheBackend";
inline constexpr std::string_view kKindPool = "KVCachePool";
inline constexpr std::string_view kKindBinding = "KVCachePoolBinding";

struct Endpoint {
  std::string name;  // "Client" | "Admin"
  std::string address;
};

struct MemberGroup {
  std::string medium;             // DRAM | VRAM
  std::string transportProtocol;  // API spelling; "Auto" defers to the backend
  std::string capacityPerMember;
};

struct KVCacheBackend {
  ObjectMeta metadata;
  struct Spec {
    std::string type = "Mooncake";
    std::string transportProtocol = "Auto";  // API spelling
    bool managed = false;
    bool external = false;
    bool multiTenancy = true;  // managed.leader.multiTenancy
    std::vector<MemberGroup> members;
    std::vector<Endpoint> externalEndpoints;
  } spec;
  struct Status {
    std::string phase;
    std::vector<Endpoint> endpoints;
    std::vector<Condition> conditions;
  } status;
};

struct KVCachePool {
  ObjectMeta metadata;
  struct Spec {
    std::vector<std::string> backends;
    std::string quotaTotal;
  } spec;
  struct Status {
    std::string phase;
    std::string clientEndpoint;
    std::vector<Condition> conditions;
  } status;
};

struct ReuseDomain {
  std::string name = "default";
  std::int64_t blockSize = 0;
  std::string dtype;
};

struct KVCachePoolBinding {
  ObjectMeta metadata;
  struct Spec {
    std::string poolRef;
    std::string quotaCeiling;
    ReuseDomain domain;
  } spec;
  struct Status {
    std::string phase;
    std::vector<Condition> conditions;
  } status;
};

Result<KVCacheBackend> backendFromJson(const Json& object);
Result<KVCachePool> poolFromJson(const Json& object);
Result<KVCachePoolBinding> bindingFromJson(const Json& object);

// The transports a backend's member groups offer, in artifact spelling, sorted and unique. A
// group's own protocol wins over the backend's unless it is Auto; an external backend offers the
// backend's protocol. Auto resolves to the store's tcp.
std::vector<std::string> offeredTransports(const KVCacheBackend& backend);

}  // namespace kvc::api
