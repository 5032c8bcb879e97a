#pragma once
// The keys our kinds are indexed under in informer caches, computed from the raw objects (no
// decode), so that the controllers and the webhooks ask one shared informer for the same index.

#include <string>
#include <vector>

#include "kvc/common/json.h"

namespace kvc::api {

// KVCachePoolBinding -> spec.poolRef.name.
inline constexpr const char* kBindingsByPool = "pool";
// KVCachePoolBinding -> spec.domain.name ("default" when left out).
inline constexpr const char* kBindingsByDomain = "domain";
// KVCachePool -> spec.backends[*].
inline constexpr const char* kPoolsByBackend = "backend";

std::vector<std::string> bindingPool(const Json& binding);
std::vector<std::string> bindingDomain(const Json& binding);
std::vector<std::string> poolBackends(const Json& pool);

}  // namespace kvc::api
