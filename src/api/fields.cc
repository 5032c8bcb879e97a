#include "fields.h"

#include "kvc/api/condition.h"
#include "kvc/api/decode.h"
#include "kvc/api/message.h"
#include "kvc/api/transport.h"
#include "kvc/common/quantity.h"

namespace kvc::api::internal {

Result<ObjectMeta> requiredMeta(const Json& object) {
  if (!object.is_object()) {
    return invalidArgument("the object must be a mapping");
  }
  KVC_ASSIGN_OR_RETURN(Json metadata, optionalObject(object, "metadata", ""));
  KVC_ASSIGN_OR_RETURN(ObjectMeta meta, objectMetaFromJson(metadata, "metadata"));
  if (meta.name.empty()) {
    return invalidArgument("metadata.name is required");
  }
  return meta;
}

Result<std::string> protocolField(const Json& transport, std::string_view path) {
  KVC_ASSIGN_OR_RETURN(auto protocol, optionalString(transport, "protocol", path));
  const std::string value = protocol.value_or("Auto");
  if (!artifactProtocol(value)) {
    std::string accepted;
    for (std::string_view v : transportProtocols()) {
      accepted += accepted.empty() ? "" : ", ";
      accepted += v;
    }
    return invalidArgument(joinPath(path, "protocol") + " \"" + value + "\" is not one of " +
                           accepted);
  }
  return value;
}

Result<std::vector<Endpoint>> endpointsFromJson(const Json& list, std::string_view path) {
  std::vector<Endpoint> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = std::string(path) + "[" + std::to_string(i) + "]";
    KVC_ASSIGN_OR_RETURN(auto name, optionalString(list[i], "name", at));
    KVC_ASSIGN_OR_RETURN(auto address, optionalString(list[i], "address", at));
    out.push_back({name.value_or(""), address.value_or("")});
  }
  return out;
}

Json endpointsToJson(const std::vector<Endpoint>& endpoints) {
  Json out = Json::array();
  for (const Endpoint& endpoint : endpoints) {
    out.push_back(Json{{"name", endpoint.name}, {"address", endpoint.address}});
  }
  return out;
}

Result<std::optional<std::int64_t>> optionalBytes(const Json& object, std::string_view field,
                                                  std::string_view path) {
  KVC_ASSIGN_OR_RETURN(auto text, optionalQuantity(object, field, path));
  if (!text) {
    return std::optional<std::int64_t>();
  }
  auto bytes = parseQuantityBytes(*text);
  if (!bytes.ok()) {
    return bytes.status().withContext(joinPath(path, field));
  }
  return std::optional<std::int64_t>(*bytes);
}

void putBytes(Json& object, std::string_view field, const std::optional<std::int64_t>& bytes) {
  if (bytes) {
    object[std::string(field)] = formatBinarySI(*bytes);
  }
}

void putPhase(Json& status, std::int64_t observed_generation, const std::string& phase,
              const std::string& phase_message) {
  if (observed_generation > 0) {
    status["observedGeneration"] = observed_generation;
  }
  if (!phase.empty()) {
    status["phase"] = phase;
  }
  if (!phase_message.empty()) {
    status["phaseMessage"] = boundMessage(phase_message);
  }
}

Status readStatusHead(const Json& status, StatusHead& out) {
  KVC_ASSIGN_OR_RETURN(auto generation, optionalInt(status, "observedGeneration", "status"));
  KVC_ASSIGN_OR_RETURN(auto phase, optionalString(status, "phase", "status"));
  KVC_ASSIGN_OR_RETURN(auto message, optionalString(status, "phaseMessage", "status"));
  out.observed_generation = generation.value_or(0);
  out.phase = phase.value_or("");
  out.phase_message = message.value_or("");
  KVC_ASSIGN_OR_RETURN(out.conditions,
                       conditionsFromJson(status.value("conditions", Json()), "status.conditions"));
  return okStatus();
}

}  // namespace kvc::api::internal
