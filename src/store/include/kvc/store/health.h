#pragma once
// GET /health of the Mooncake master.
//
// The route answers 200 on every replica, standbys included; `service_ready` is the only verdict.
// `status` is always "ok" and is kept for display only: never branch on it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kvc/store/error.h"

namespace kvc::store {

struct Health {
  bool service_ready = false;
  std::string status;    // "ok" (display only)
  std::string role;      // "leader" | "standby" ("" when absent)
  std::string ha_state;  // "serving", "standby", "candidate", ... ("" when absent)
  std::optional<std::string> leader_address;  // null or absent on a master without HA
  std::optional<std::int64_t> view_version;
};

// Parses the body. A body that is not a JSON object, or whose `service_ready` is missing or not
// a boolean, is MalformedBody; the other fields are optional.
StoreResult<Health> parseHealth(std::string_view body);

}  // namespace kvc::store
