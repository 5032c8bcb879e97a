#include "kvc/api/kvcache.h"

#include <algorithm>
#include <set>

#include "kvc/api/decode.h"
#include "kvc/api/transport.h"

namespace kvc::api {
namespace {

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

Result<Json> statusOf(const Json& object) { return optionalObject(object, "status", ""); }

}  // namespace

Result<KVCacheBackend> backendFromJson(const Json& object) {
  KVCacheBackend backend;
  KVC_ASSIGN_OR_RETURN(backend.metadata, requiredMeta(object));
  KVC_ASSIGN_OR_RETURN(Json spec, optionalObject(object, "spec", ""));
  KVC_ASSIGN_OR_RETURN(auto type, optionalString(spec, "type", "spec"));
  backend.spec.type = type.value_or("Mooncake");
  KVC_ASSIGN_OR_RETURN(Json transport, optionalObject(spec, "transport", "spec"));
  KVC_ASSIGN_OR_RETURN(backend.spec.transportProtocol, protocolField(transport, "spec.transport"));
  KVC_ASSIGN_OR_RETURN(Json connection, optionalObject(spec, "connection", "spec"));
  backend.spec.managed = connection.contains("managed") && !connection["managed"].is_null();
  backend.spec.external = connection.contains("external") && !connection["external"].is_null();
  if (backend.spec.managed) {
    KVC_ASSIGN_OR_RETURN(Json managed, optionalObject(connection, "managed", "spec.connection"));
    KVC_ASSIGN_OR_RETURN(Json leader, optionalObject(managed, "leader", "spec.connection.managed"));
    KVC_ASSIGN_OR_RETURN(auto multiTenancy,
                         optionalBool(leader, "multiTenancy", "spec.connection.managed.leader"));
    backend.spec.multiTenancy = multiTenancy.value_or(true);
    KVC_ASSIGN_OR_RETURN(Json members, optionalArray(managed, "members", "spec.connection.managed"));
    for (std::size_t i = 0; i < members.size(); ++i) {
      const std::string at = "spec.connection.managed.members[" + std::to_string(i) + "]";
      MemberGroup group;
      KVC_ASSIGN_OR_RETURN(auto medium, optionalString(members[i], "medium", at));
      KVC_ASSIGN_OR_RETURN(auto capacity, optionalQuantity(members[i], "capacityPerMember", at));
      KVC_ASSIGN_OR_RETURN(Json groupTransport, optionalObject(members[i], "transport", at));
      KVC_ASSIGN_OR_RETURN(group.transportProtocol,
                           protocolField(groupTransport, joinPath(at, "transport")));
      group.medium = medium.value_or("");
      group.capacityPerMember = capacity.value_or("");
      backend.spec.members.push_back(std::move(group));
    }
  }
  if (backend.spec.external) {
    KVC_ASSIGN_OR_RETURN(Json external, optionalObject(connection, "external", "spec.connection"));
    KVC_ASSIGN_OR_RETURN(Json endpoints,
                         optionalArray(external, "endpoints", "spec.connection.external"));
    KVC_ASSIGN_OR_RETURN(backend.spec.externalEndpoints,
                         endpointsFromJson(endpoints, "spec.connection.external.endpoints"));
  }
  KVC_ASSIGN_OR_RETURN(Json status, statusOf(object));
  KVC_ASSIGN_OR_RETURN(auto phase, optionalString(status, "phase", "status"));
  backend.status.phase = phase.value_or("");
  KVC_ASSIGN_OR_RETURN(Json endpoints, optionalArray(status, "endpoints", "status"));
  KVC_ASSIGN_OR_RETURN(backend.status.endpoints, endpointsFromJson(endpoints, "status.endpoints"));
  KVC_ASSIGN_OR_RETURN(backend.status.conditions,
                       conditionsFromJson(status.value("conditions", Json()), "status.conditions"));
  return backend;
}

Result<KVCachePool> poolFromJson(const Json& object) {
  KVCachePool pool;
  KVC_ASSIGN_OR_RETURN(pool.metadata, requiredMeta(object));
  KVC_ASSIGN_OR_RETURN(Json spec, optionalObject(object, "spec", ""));
  KVC_ASSIGN_OR_RETURN(Json backends, optionalArray(spec, "backends", "spec"));
  for (std::size_t i = 0; i < backends.size(); ++i) {
    if (!backends[i].is_string()) {
      return invalidArgument("spec.backends[" + std::to_string(i) + "] must be a string");
    }
    pool.spec.backends.push_back(backends[i].get<std::string>());
  }
  KVC_ASSIGN_OR_RETURN(Json quota, optionalObject(spec, "quota", "spec"));
  KVC_ASSIGN_OR_RETURN(auto total, optionalQuantity(quota, "total", "spec.quota"));
  pool.spec.quotaTotal = total.value_or("");
  KVC_ASSIGN_OR_RETURN(Json status, statusOf(object));
  KVC_ASSIGN_OR_RETURN(auto phase, optionalString(status, "phase", "status"));
  KVC_ASSIGN_OR_RETURN(auto endpoint, optionalString(status, "clientEndpoint", "status"));
  pool.status.phase = phase.value_or("");
  pool.status.clientEndpoint = endpoint.value_or("");
  KVC_ASSIGN_OR_RETURN(pool.status.conditions,
                       conditionsFromJson(status.value("conditions", Json()), "status.conditions"));
  return pool;
}

Result<KVCachePoolBinding> bindingFromJson(const Json& object) {
  KVCachePoolBinding binding;
  KVC_ASSIGN_OR_RETURN(binding.metadata, requiredMeta(object));
  KVC_ASSIGN_OR_RETURN(Json spec, optionalObject(object, "spec", ""));
  KVC_ASSIGN_OR_RETURN(Json poolRef, optionalObject(spec, "poolRef", "spec"));
  KVC_ASSIGN_OR_RETURN(auto poolName, optionalString(poolRef, "name", "spec.poolRef"));
  binding.spec.poolRef = poolName.value_or("");
  KVC_ASSIGN_OR_RETURN(Json quota, optionalObject(spec, "quota", "spec"));
  KVC_ASSIGN_OR_RETURN(auto ceiling, optionalQuantity(quota, "ceiling", "spec.quota"));
  binding.spec.quotaCeiling = ceiling.value_or("");
  KVC_ASSIGN_OR_RETURN(Json domain, optionalObject(spec, "domain", "spec"));
  KVC_ASSIGN_OR_RETURN(auto domainName, optionalString(domain, "name", "spec.domain"));
  KVC_ASSIGN_OR_RETURN(auto blockSize, optionalInt(domain, "blockSize", "spec.domain"));
  KVC_ASSIGN_OR_RETURN(auto dtype, optionalString(domain, "dtype", "spec.domain"));
  binding.spec.domain.name = domainName.value_or("default");  // the API server's default
  binding.spec.domain.blockSize = blockSize.value_or(0);
  binding.spec.domain.dtype = dtype.value_or("");
  KVC_ASSIGN_OR_RETURN(Json status, statusOf(object));
  KVC_ASSIGN_OR_RETURN(auto phase, optionalString(status, "phase", "status"));
  binding.status.phase = phase.value_or("");
  KVC_ASSIGN_OR_RETURN(binding.status.conditions,
                       conditionsFromJson(status.value("conditions", Json()), "status.conditions"));
  return binding;
}

std::vector<std::string> offeredTransports(const KVCacheBackend& backend) {
  std::set<std::string> offers;
  const std::string backendArtifact =
      artifactProtocol(backend.spec.transportProtocol).value_or("tcp");
  if (backend.spec.managed && !backend.spec.members.empty()) {
    for (const MemberGroup& group : backend.spec.members) {
      if (group.transportProtocol.empty() || group.transportProtocol == "Auto") {
        offers.insert(backendArtifact);
      } else {
        offers.insert(artifactProtocol(group.transportProtocol).value_or(backendArtifact));
      }
    }
  } else {
    offers.insert(backendArtifact);
  }
  return {offers.begin(), offers.end()};
}

}  // namespace kvc::api
