#pragma once
// What every kind's status starts with (contract §1 "Status conventions"): the generation the
// controller last evaluated, the phase with its message, and the conditions. The status structs
// of KVCacheBackend, KVCachePool, KVCachePoolBinding and ModelDeployment extend it, so the one
// decoder (and the status writer's stamping) serves all four.

#include <cstdint>
#include <string>
#include <vector>

#include "kvc/api/condition.h"

namespace kvc::api {

struct StatusHead {
  std::int64_t observed_generation = 0;
  std::string phase;  // see phase.h
  std::string phase_message;
  std::vector<Condition> conditions;
};

}  // namespace kvc::api
