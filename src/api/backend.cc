#include "kvc/api/backend.h"

#include <set>

#include "fields.h"
#include "kvc/api/decode.h"
#include "kvc/api/transport.h"

namespace kvc::api {
namespace {

using internal::endpointsFromJson;
using internal::protocolField;

Result<std::vector<BackendMember>> membersFromJson(const Json& list, std::string_view path) {
  std::vector<BackendMember> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = std::string(path) + "[" + std::to_string(i) + "]";
    BackendMember member;
    for (auto [field, into] :
         {std::pair{"segmentID", &member.segment_id}, std::pair{"clientID", &member.client_id},
          std::pair{"segmentName", &member.segment_name}, std::pair{"nodeName", &member.node_name},
          std::pair{"medium", &member.medium}, std::pair{"protocol", &member.protocol},
          std::pair{"state", &member.state}}) {
      KVC_ASSIGN_OR_RETURN(auto value, optionalString(list[i], field, at));
      *into = value.value_or("");
    }
    out.push_back(std::move(member));
  }
  return out;
}

Result<KVCacheBackend::Status> statusFromJson(const Json& object) {
  KVCacheBackend::Status out;
  KVC_ASSIGN_OR_RETURN(Json status, optionalObject(object, "status", ""));
  KVC_RETURN_IF_ERROR(internal::readStatusHead(status, out));
  KVC_ASSIGN_OR_RETURN(Json endpoints, optionalArray(status, "endpoints", "status"));
  KVC_ASSIGN_OR_RETURN(out.endpoints, endpointsFromJson(endpoints, "status.endpoints"));
  KVC_ASSIGN_OR_RETURN(Json capacity, optionalObject(status, "capacity", "status"));
  KVC_ASSIGN_OR_RETURN(out.capacity_total,
                       internal::optionalBytes(capacity, "total", "status.capacity"));
  KVC_ASSIGN_OR_RETURN(out.capacity_used,
                       internal::optionalBytes(capacity, "used", "status.capacity"));
  KVC_ASSIGN_OR_RETURN(Json members, optionalArray(status, "members", "status"));
  KVC_ASSIGN_OR_RETURN(out.members, membersFromJson(members, "status.members"));
  KVC_ASSIGN_OR_RETURN(out.used_by,
                       objectReferencesFromJson(status.value("usedBy", Json()), "status.usedBy"));
  return out;
}

Result<std::vector<std::string>> stringList(const Json& object, std::string_view field,
                                            std::string_view path) {
  KVC_ASSIGN_OR_RETURN(Json list, optionalArray(object, field, path));
  return listFromJson<std::string>(
      list, joinPath(path, field),
      [](const Json& item, const std::string& at) -> Result<std::string> {
        if (!item.is_string()) {
          return Status(StatusCode::InvalidArgument, at + " must be a string");
        }
        return item.get<std::string>();
      });
}

Result<std::optional<LocalDisk>> localDiskFromJson(const Json& group, const std::string& at) {
  KVC_ASSIGN_OR_RETURN(Json disks, optionalArray(group, "localDisks", at));
  if (disks.empty()) {
    return std::optional<LocalDisk>();
  }
  const std::string path = joinPath(at, "localDisks") + "[0]";
  LocalDisk disk;
  KVC_ASSIGN_OR_RETURN(auto dir, optionalString(disks[0], "path", path));
  disk.path = dir.value_or("");
  KVC_ASSIGN_OR_RETURN(disk.capacity_bytes, internal::optionalBytes(disks[0], "capacity", path));
  KVC_ASSIGN_OR_RETURN(disk.key_limit, optionalInt(disks[0], "keyLimit", path));
  KVC_ASSIGN_OR_RETURN(Json eviction, optionalObject(disks[0], "eviction", path));
  const std::string eviction_at = joinPath(path, "eviction");
  KVC_ASSIGN_OR_RETURN(auto enabled, optionalBool(eviction, "enabled", eviction_at));
  disk.eviction_enabled = enabled.value_or(true);
  KVC_ASSIGN_OR_RETURN(disk.eviction_policy, optionalString(eviction, "policy", eviction_at));
  KVC_ASSIGN_OR_RETURN(Json watermark, optionalObject(eviction, "watermark", eviction_at));
  const std::string watermark_at = joinPath(eviction_at, "watermark");
  KVC_ASSIGN_OR_RETURN(auto high, optionalInt(watermark, "high", watermark_at));
  KVC_ASSIGN_OR_RETURN(auto low, optionalInt(watermark, "low", watermark_at));
  if (high) {
    disk.watermark_high = static_cast<int>(*high);
  }
  if (low) {
    disk.watermark_low = static_cast<int>(*low);
  }
  KVC_ASSIGN_OR_RETURN(auto clean, optionalBool(disks[0], "cleanAfterDelete", path));
  disk.clean_after_delete = clean.value_or(false);
  return std::optional<LocalDisk>(std::move(disk));
}

Result<MemberGroup> memberGroupFromJson(const Json& item, const std::string& at) {
  MemberGroup group;
  KVC_ASSIGN_OR_RETURN(auto medium, optionalString(item, "medium", at));
  KVC_ASSIGN_OR_RETURN(auto capacity, optionalQuantity(item, "capacityPerMember", at));
  KVC_ASSIGN_OR_RETURN(Json group_transport, optionalObject(item, "transport", at));
  KVC_ASSIGN_OR_RETURN(group.transport_protocol,
                       protocolField(group_transport, joinPath(at, "transport")));
  group.medium = medium.value_or("");
  group.capacity_per_member = capacity.value_or("");
  KVC_ASSIGN_OR_RETURN(group.node_selector, optionalObject(item, "nodeSelector", at));
  KVC_ASSIGN_OR_RETURN(group.local_buffer_size, optionalQuantity(item, "localBufferSize", at));
  KVC_ASSIGN_OR_RETURN(group.image, optionalString(item, "image", at));
  KVC_ASSIGN_OR_RETURN(auto fabric, optionalInt(item, "fabricInterfaceCount", at));
  group.fabric_interface_count = fabric.value_or(1);
  KVC_ASSIGN_OR_RETURN(group.extra_args, stringList(item, "extraArgs", at));
  KVC_ASSIGN_OR_RETURN(group.extra_env, optionalArray(item, "extraEnv", at));
  KVC_ASSIGN_OR_RETURN(group.runtime_class_name, optionalString(item, "runtimeClassName", at));
  KVC_ASSIGN_OR_RETURN(group.host_paths, optionalArray(item, "hostPaths", at));
  KVC_ASSIGN_OR_RETURN(Json security, optionalObject(item, "securityContext", at));
  if (!security.empty()) {
    group.security_context = std::move(security);
  }
  KVC_ASSIGN_OR_RETURN(group.local_disk, localDiskFromJson(item, at));
  return group;
}

Result<LeaderSpec> leaderFromJson(const Json& leader, std::string_view at) {
  LeaderSpec out;
  KVC_ASSIGN_OR_RETURN(auto replicas, optionalInt(leader, "replicas", at));
  out.replicas = replicas.value_or(1);
  for (auto [field, into] : {std::pair{"electionBackend", &out.election_backend},
                             std::pair{"memberAddressing", &out.member_addressing},
                             std::pair{"allocationStrategy", &out.allocation_strategy}}) {
    KVC_ASSIGN_OR_RETURN(auto value, optionalString(leader, field, at));
    if (value) {
      *into = *value;
    }
  }
  KVC_ASSIGN_OR_RETURN(out.extra_args, stringList(leader, "extraArgs", at));
  KVC_ASSIGN_OR_RETURN(out.extra_env, optionalArray(leader, "extraEnv", at));
  return out;
}

}  // namespace

std::string endpointAddress(const std::vector<Endpoint>& endpoints, std::string_view name) {
  for (const Endpoint& endpoint : endpoints) {
    if (endpoint.name == name) {
      return endpoint.address;
    }
  }
  return {};
}

Result<KVCacheBackend> backendFromJson(const Json& object) {
  KVCacheBackend backend;
  KVC_ASSIGN_OR_RETURN(backend.metadata, internal::requiredMeta(object));
  KVC_ASSIGN_OR_RETURN(Json spec, optionalObject(object, "spec", ""));
  KVC_ASSIGN_OR_RETURN(auto type, optionalString(spec, "type", "spec"));
  backend.spec.type = type.value_or("Mooncake");
  KVC_ASSIGN_OR_RETURN(backend.spec.image, optionalString(spec, "image", "spec"));
  KVC_ASSIGN_OR_RETURN(backend.spec.image_pull_policy,
                       optionalString(spec, "imagePullPolicy", "spec"));
  KVC_ASSIGN_OR_RETURN(Json pull_secrets, optionalArray(spec, "imagePullSecrets", "spec"));
  KVC_ASSIGN_OR_RETURN(
      backend.spec.image_pull_secrets,
      listFromJson<std::string>(pull_secrets, "spec.imagePullSecrets",
                                [](const Json& item, const std::string& at) -> Result<std::string> {
                                  KVC_ASSIGN_OR_RETURN(auto name, optionalString(item, "name", at));
                                  return name.value_or("");
                                }));
  KVC_ASSIGN_OR_RETURN(Json transport, optionalObject(spec, "transport", "spec"));
  KVC_ASSIGN_OR_RETURN(backend.spec.transport_protocol, protocolField(transport, "spec.transport"));
  KVC_ASSIGN_OR_RETURN(Json connection, optionalObject(spec, "connection", "spec"));
  backend.spec.managed = connection.contains("managed") && !connection["managed"].is_null();
  backend.spec.external = connection.contains("external") && !connection["external"].is_null();
  if (backend.spec.managed) {
    KVC_ASSIGN_OR_RETURN(Json managed, optionalObject(connection, "managed", "spec.connection"));
    KVC_ASSIGN_OR_RETURN(Json leader, optionalObject(managed, "leader", "spec.connection.managed"));
    KVC_ASSIGN_OR_RETURN(auto multi_tenancy,
                         optionalBool(leader, "multiTenancy", "spec.connection.managed.leader"));
    backend.spec.multi_tenancy = multi_tenancy.value_or(true);
    KVC_ASSIGN_OR_RETURN(backend.spec.leader,
                         leaderFromJson(leader, "spec.connection.managed.leader"));
    KVC_ASSIGN_OR_RETURN(Json members,
                         optionalArray(managed, "members", "spec.connection.managed"));
    KVC_ASSIGN_OR_RETURN(
        backend.spec.members,
        listFromJson<MemberGroup>(members, "spec.connection.managed.members", memberGroupFromJson));
    KVC_ASSIGN_OR_RETURN(Json scale_in,
                         optionalObject(managed, "scaleIn", "spec.connection.managed"));
    KVC_ASSIGN_OR_RETURN(
        backend.spec.scale_in_grace_period_seconds,
        optionalInt(scale_in, "gracePeriodSeconds", "spec.connection.managed.scaleIn"));
  }
  if (backend.spec.external) {
    KVC_ASSIGN_OR_RETURN(Json external, optionalObject(connection, "external", "spec.connection"));
    KVC_ASSIGN_OR_RETURN(Json endpoints,
                         optionalArray(external, "endpoints", "spec.connection.external"));
    KVC_ASSIGN_OR_RETURN(backend.spec.external_endpoints,
                         endpointsFromJson(endpoints, "spec.connection.external.endpoints"));
  }
  KVC_ASSIGN_OR_RETURN(backend.status, statusFromJson(object));
  return backend;
}

Json backendStatusToJson(const KVCacheBackend::Status& status) {
  Json out = Json::object();
  internal::putPhase(out, status.observed_generation, status.phase, status.phase_message);
  if (!status.conditions.empty()) {
    out["conditions"] = conditionsToJson(status.conditions);
  }
  if (!status.endpoints.empty()) {
    out["endpoints"] = internal::endpointsToJson(status.endpoints);
  }
  if (status.capacity_total || status.capacity_used) {
    Json capacity = Json::object();
    internal::putBytes(capacity, "total", status.capacity_total);
    internal::putBytes(capacity, "used", status.capacity_used);
    out["capacity"] = std::move(capacity);
  }
  if (!status.members.empty()) {
    Json members = Json::array();
    for (const BackendMember& m : status.members) {
      Json member = {
          {"segmentID", m.segment_id}, {"clientID", m.client_id}, {"segmentName", m.segment_name}};
      for (auto [field, value] :
           {std::pair{"nodeName", &m.node_name}, std::pair{"medium", &m.medium},
            std::pair{"protocol", &m.protocol}, std::pair{"state", &m.state}}) {
        if (!value->empty()) {
          member[field] = *value;
        }
      }
      members.push_back(std::move(member));
    }
    out["members"] = std::move(members);
  }
  if (!status.used_by.empty()) {
    out["usedBy"] = objectReferencesToJson(status.used_by);
  }
  return out;
}

std::vector<std::string> offeredTransports(const KVCacheBackend& backend) {
  std::set<std::string> offers;
  const std::string backend_artifact =
      artifactProtocol(backend.spec.transport_protocol).value_or("tcp");
  if (backend.spec.managed && !backend.spec.members.empty()) {
    for (const MemberGroup& group : backend.spec.members) {
      if (group.transport_protocol.empty() || group.transport_protocol == "Auto") {
        offers.insert(backend_artifact);
      } else {
        offers.insert(artifactProtocol(group.transport_protocol).value_or(backend_artifact));
      }
    }
  } else {
    offers.insert(backend_artifact);
  }
  return {offers.begin(), offers.end()};
}

}  // namespace kvc::api
