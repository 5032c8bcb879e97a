#pragma once
// KVCachePool (worker.gpustack.ai/v1, cluster-scoped): how much of one backend may be handed
// out; publishes the client endpoint and the domains registered on the store (contract §4).
// Absent figures stay absent in poolStatusToJson.

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

inline constexpr std::string_view kKindPool = "KVCachePool";

// A reuse domain registered for one of the pool's Bindings (status.domains[]).
struct PoolDomain {
  std::string name;
  std::string binding_namespace;
  std::string binding_name;
  std::int64_t block_size = 0;
  std::string dtype;
  std::optional<std::int64_t> blocks;
  std::optional<std::string> hit_rate;

  friend bool operator==(const PoolDomain&, const PoolDomain&) = default;
};

struct KVCachePool {
  ObjectMeta metadata;
  struct Spec {
    std::vector<std::string> backends;
    std::string quota_total;  // a quantity, as written
  } spec;
  struct Status : StatusHead {
    std::string client_endpoint;              // "" = not published
    std::optional<std::int64_t> usage_total;  // bytes
    std::vector<PoolDomain> domains;
    std::vector<ObjectReference> used_by;  // the pool's Bindings
  } status;
};

Result<KVCachePool> poolFromJson(const Json& object);
Json poolStatusToJson(const KVCachePool::Status& status);

}  // namespace kvc::api
