#pragma once
// KVCachePoolBinding (worker.gpustack.ai/v1, namespaced): the authorization point — one
// namespace may draw on a pool up to a ceiling under one immutable reuse domain (contract §5).
// Every status figure is optional; bindingStatusToJson leaves out what was not observed.

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

inline constexpr std::string_view kKindBinding = "KVCachePoolBinding";
inline constexpr std::string_view kDefaultDomainName = "default";

struct ReuseDomain {
  std::string name = std::string(kDefaultDomainName);
  std::int64_t block_size = 0;
  std::string dtype;

  friend bool operator==(const ReuseDomain&, const ReuseDomain&) = default;
};

struct KVCachePoolBinding {
  ObjectMeta metadata;
  struct Spec {
    std::string pool_ref;
    std::string quota_ceiling;  // a quantity, as written
    ReuseDomain domain;
  } spec;
  struct Status : StatusHead {
    std::optional<std::int64_t> requested_quota;  // bytes, the tenant's requested bytes verbatim
    std::optional<std::int64_t> effective_quota;  // bytes, the grant
    std::optional<std::int64_t> usage;            // bytes
    std::optional<bool> over_quota;
    std::optional<std::int64_t> blocks;
    std::optional<std::string> hit_rate;
    std::vector<ObjectReference> used_by;  // consuming ModelDeployments
  } status;
};

Result<KVCachePoolBinding> bindingFromJson(const Json& object);
Json bindingStatusToJson(const KVCachePoolBinding::Status& status);

}  // namespace kvc::api
