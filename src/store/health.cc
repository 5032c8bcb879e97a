#include "kvc/store/health.h"

#include "internal/json_fields.h"

namespace kvc::store {

StoreResult<Health> parseHealth(std::string_view body) {
  constexpr std::string_view kWhat = "/health";
  auto parsed = internal::parseJsonBody(body, kWhat);
  if (!parsed.ok()) {
    return parsed.error();
  }
  const Json& obj = *parsed;
  if (!obj.is_object()) {
    return internal::malformed(kWhat, "not a JSON object: " + excerpt(body));
  }
  Health health;
  auto ready = internal::readBool(obj, "service_ready", kWhat, /*required=*/true);
  if (!ready.ok()) {
    return ready.error();
  }
  health.service_ready = **ready;
  for (auto [key, field] : {std::pair{"status", &health.status}, std::pair{"role", &health.role},
                            std::pair{"ha_state", &health.ha_state}}) {
    auto value = internal::readString(obj, key, kWhat, /*required=*/false);
    if (!value.ok()) {
      return value.error();
    }
    *field = std::move(*value);
  }
  if (const auto it = obj.find("leader_address"); it != obj.end() && !it->is_null()) {
    if (!it->is_string()) {
      return internal::malformed(kWhat, "\"leader_address\" is not a string");
    }
    health.leader_address = it->get<std::string>();
  }
  if (const auto it = obj.find("view_version"); it != obj.end() && !it->is_null()) {
    if (!it->is_number_integer()) {
      return internal::malformed(kWhat, "\"view_version\" is not a whole number");
    }
    health.view_version = it->get<std::int64_t>();
  }
  return health;
}

}  // namespace kvc::store
