#pragma once
// Private helpers of the api decoders and encoders: object metadata, transport fields, endpoint
// lists, and status figures (byte quantities written as BinarySI strings — "16Gi",
// "6871947673" — and absent when not observed).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <vector>

#include "kvc/api/backend.h"
#include "kvc/api/meta.h"
#include "kvc/api/status_head.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::api::internal {

// metadata, decoded; metadata.name is required.
Result<ObjectMeta> requiredMeta(const Json& object);
// `<path>.protocol`, defaulted to Auto and checked against the enum.
Result<std::string> protocolField(const Json& transport, std::string_view path);
Result<std::vector<Endpoint>> endpointsFromJson(const Json& list, std::string_view path);
Json endpointsToJson(const std::vector<Endpoint>& endpoints);

// Reads a quantity field as bytes; absent or null gives nullopt.
Result<std::optional<std::int64_t>> optionalBytes(const Json& object, std::string_view field,
                                                  std::string_view path);
// Writes `bytes` as a BinarySI quantity under `field` when present.
void putBytes(Json& object, std::string_view field, const std::optional<std::int64_t>& bytes);
// Reads the head every kind's status shares — observedGeneration, phase, phaseMessage,
// conditions — from `status` into `out`; putPhase and the conditions encoder write it back.
Status readStatusHead(const Json& status, StatusHead& out);

// Writes the phase, its message (bounded; omitted when empty) and observedGeneration.
void putPhase(Json& status, std::int64_t observed_generation, const std::string& phase,
              const std::string& phase_message);

}  // namespace kvc::api::internal
