#include "kvc/api/model_deployment.h"

#include <initializer_list>

#include "fields.h"
#include "kvc/api/decode.h"

namespace kvc::api {
namespace {

const std::initializer_list<std::string_view> kEngineNames = {kEngineVLLM, kEngineSGLang};
const std::initializer_list<std::string_view> kRoleKinds = {kRoleKindServer, kRoleKindPrefill,
                                                            kRoleKindDecode};
const std::initializer_list<std::string_view> kConnectors = {kConnectorMooncake};
const std::initializer_list<std::string_view> kPullPolicies = {"Always", "IfNotPresent", "Never"};
const std::initializer_list<std::string_view> kPortProtocols = {kPortProtocolTCP, "UDP", "SCTP"};
const std::initializer_list<std::string_view> kHostPathTypes = {
    "",       "DirectoryOrCreate", "Directory",  "FileOrCreate", "File",
    "Socket", "CharDevice",        "BlockDevice"};

std::string itemPath(std::string_view path, std::size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

// True when `field` is set to something other than null.
bool present(const Json& object, std::string_view field) {
  if (!object.is_object()) {
    return false;
  }
  auto it = object.find(field);
  return it != object.end() && !it->is_null();
}

// A list item that must be a mapping; `at` is its path ("spec.roles[1]").
Status requireObject(const Json& item, const std::string& at) {
  if (!item.is_object()) {
    return invalidArgument(at + " must be an object, not " + std::string(item.type_name()));
  }
  return okStatus();
}

// `path` is the field's full path ("spec.engine.name").
Status requireOneOf(const std::string& value, std::initializer_list<std::string_view> accepted,
                    std::string_view path) {
  std::string listed;
  for (std::string_view v : accepted) {
    if (v == value) {
      return okStatus();
    }
    listed += listed.empty() ? "" : ", ";
    listed += v.empty() ? std::string_view("\"\"") : v;
  }
  return invalidArgument(std::string(path) + " \"" + value + "\" is not one of " + listed);
}

// An optional string field checked against a schema enum.
Result<std::optional<std::string>> optionalEnum(const Json& object, std::string_view field,
                                                std::string_view path,
                                                std::initializer_list<std::string_view> accepted) {
  KVC_ASSIGN_OR_RETURN(auto value, optionalString(object, field, path));
  if (value) {
    KVC_RETURN_IF_ERROR(requireOneOf(*value, accepted, joinPath(path, field)));
  }
  return value;
}

// A list of strings; absent or null gives an empty list.
Result<std::vector<std::string>> stringList(const Json& object, std::string_view field,
                                            std::string_view path) {
  KVC_ASSIGN_OR_RETURN(Json list, optionalArray(object, field, path));
  const std::string list_path = joinPath(path, field);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      return invalidArgument(itemPath(list_path, i) + " must be a string, not " +
                             std::string(list[i].type_name()));
    }
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

Result<std::optional<std::vector<std::string>>> optionalStringList(const Json& object,
                                                                   std::string_view field,
                                                                   std::string_view path) {
  if (!present(object, field)) {
    return std::optional<std::vector<std::string>>();
  }
  KVC_ASSIGN_OR_RETURN(auto list, stringList(object, field, path));
  return std::optional<std::vector<std::string>>(std::move(list));
}

Result<std::vector<RoleEnvVar>> envFromJson(const Json& role, std::string_view path) {
  KVC_ASSIGN_OR_RETURN(Json list, optionalArray(role, "env", path));
  std::vector<RoleEnvVar> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = itemPath(joinPath(path, "env"), i);
    KVC_RETURN_IF_ERROR(requireObject(list[i], at));
    KVC_ASSIGN_OR_RETURN(auto name, optionalString(list[i], "name", at));
    KVC_ASSIGN_OR_RETURN(auto value, optionalString(list[i], "value", at));
    out.push_back({name.value_or(""), value.value_or("")});
  }
  return out;
}

Result<std::vector<std::string>> pullSecretsFromJson(const Json& role, std::string_view path) {
  KVC_ASSIGN_OR_RETURN(Json list, optionalArray(role, "imagePullSecrets", path));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = itemPath(joinPath(path, "imagePullSecrets"), i);
    KVC_RETURN_IF_ERROR(requireObject(list[i], at));
    KVC_ASSIGN_OR_RETURN(auto name, optionalString(list[i], "name", at));
    out.push_back(name.value_or(""));
  }
  return out;
}

Result<std::vector<RolePort>> portsFromJson(const Json& role, std::string_view path) {
  KVC_ASSIGN_OR_RETURN(Json list, optionalArray(role, "ports", path));
  std::vector<RolePort> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = itemPath(joinPath(path, "ports"), i);
    KVC_RETURN_IF_ERROR(requireObject(list[i], at));
    KVC_ASSIGN_OR_RETURN(auto port, optionalInt(list[i], "port", at));
    KVC_ASSIGN_OR_RETURN(auto protocol, optionalEnum(list[i], "protocol", at, kPortProtocols));
    out.push_back({port.value_or(0), protocol.value_or(std::string(kPortProtocolTCP))});
  }
  return out;
}

// The name of a configMap or secret source, or nullopt when the volume has none.
Result<std::optional<std::string>> sourceName(const Json& volume, std::string_view field,
                                              std::string_view path) {
  if (!present(volume, field)) {
    return std::optional<std::string>();
  }
  KVC_ASSIGN_OR_RETURN(Json source, optionalObject(volume, field, path));
  KVC_ASSIGN_OR_RETURN(auto name, optionalString(source, "name", joinPath(path, field)));
  return std::optional<std::string>(name.value_or(""));
}

Result<std::vector<RoleVolume>> volumesFromJson(const Json& role, std::string_view path) {
  KVC_ASSIGN_OR_RETURN(Json list, optionalArray(role, "additionalVolumes", path));
  std::vector<RoleVolume> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = itemPath(joinPath(path, "additionalVolumes"), i);
    KVC_RETURN_IF_ERROR(requireObject(list[i], at));
    RoleVolume volume;
    KVC_ASSIGN_OR_RETURN(auto mount_path, optionalString(list[i], "mountPath", at));
    volume.mount_path = mount_path.value_or("");
    KVC_ASSIGN_OR_RETURN(volume.read_only, optionalBool(list[i], "readOnly", at));
    KVC_ASSIGN_OR_RETURN(volume.sub_path, optionalString(list[i], "subPath", at));
    KVC_ASSIGN_OR_RETURN(volume.config_map, sourceName(list[i], "configMap", at));
    KVC_ASSIGN_OR_RETURN(volume.secret, sourceName(list[i], "secret", at));
    if (present(list[i], "hostPath")) {
      const std::string host_at = joinPath(at, "hostPath");
      KVC_ASSIGN_OR_RETURN(Json host_path, optionalObject(list[i], "hostPath", at));
      KVC_ASSIGN_OR_RETURN(auto host, optionalString(host_path, "path", host_at));
      KVC_ASSIGN_OR_RETURN(auto type, optionalEnum(host_path, "type", host_at, kHostPathTypes));
      volume.host_path = RoleHostPath{host.value_or(""), std::move(type)};
    }
    out.push_back(std::move(volume));
  }
  return out;
}

Result<ModelDeploymentRole> roleFromJson(const Json& item, const std::string& at) {
  KVC_RETURN_IF_ERROR(requireObject(item, at));
  ModelDeploymentRole role;
  KVC_ASSIGN_OR_RETURN(auto name, optionalString(item, "name", at));
  KVC_ASSIGN_OR_RETURN(auto kind, optionalEnum(item, "kind", at, kRoleKinds));
  KVC_ASSIGN_OR_RETURN(auto replicas, optionalInt(item, "replicas", at));
  KVC_ASSIGN_OR_RETURN(auto size, optionalInt(item, "size", at));
  role.name = name.value_or("");
  role.kind = kind.value_or(std::string(kRoleKindServer));
  role.replicas = replicas.value_or(1);
  role.size = size.value_or(1);
  KVC_ASSIGN_OR_RETURN(role.instance_type, optionalString(item, "instanceType", at));
  KVC_ASSIGN_OR_RETURN(Json resources, optionalObject(item, "resources", at));
  const std::string resources_at = joinPath(at, "resources");
  KVC_ASSIGN_OR_RETURN(role.resources.accelerator,
                       optionalQuantity(resources, "accelerator", resources_at));
  KVC_ASSIGN_OR_RETURN(role.resources.interface_count,
                       optionalInt(resources, "interface", resources_at));
  KVC_ASSIGN_OR_RETURN(role.command, optionalStringList(item, "command", at));
  KVC_ASSIGN_OR_RETURN(role.extra_args, stringList(item, "extraArgs", at));
  KVC_ASSIGN_OR_RETURN(role.env, envFromJson(item, at));
  KVC_ASSIGN_OR_RETURN(role.image, optionalString(item, "image", at));
  KVC_ASSIGN_OR_RETURN(role.image_pull_policy,
                       optionalEnum(item, "imagePullPolicy", at, kPullPolicies));
  KVC_ASSIGN_OR_RETURN(role.image_pull_secrets, pullSecretsFromJson(item, at));
  KVC_ASSIGN_OR_RETURN(role.privileged, optionalBool(item, "privileged", at));
  KVC_ASSIGN_OR_RETURN(role.ports, portsFromJson(item, at));
  KVC_ASSIGN_OR_RETURN(role.additional_volumes, volumesFromJson(item, at));
  KVC_ASSIGN_OR_RETURN(role.termination_grace_period_seconds,
                       optionalInt(item, "terminationGracePeriodSeconds", at));
  return role;
}

Result<ModelDeployment::Spec> specFromJson(const Json& object) {
  ModelDeployment::Spec out;
  KVC_ASSIGN_OR_RETURN(Json spec, optionalObject(object, "spec", ""));
  KVC_ASSIGN_OR_RETURN(Json model, optionalObject(spec, "model", "spec"));
  KVC_ASSIGN_OR_RETURN(auto model_name, optionalString(model, "name", "spec.model"));
  out.model_name = model_name.value_or("");
  KVC_ASSIGN_OR_RETURN(Json engine, optionalObject(spec, "engine", "spec"));
  KVC_ASSIGN_OR_RETURN(auto engine_name, optionalEnum(engine, "name", "spec.engine", kEngineNames));
  out.engine.name = engine_name.value_or("");
  KVC_ASSIGN_OR_RETURN(out.engine.version, optionalString(engine, "version", "spec.engine"));
  KVC_ASSIGN_OR_RETURN(out.engine.image, optionalString(engine, "image", "spec.engine"));
  if (present(spec, "kvCache")) {
    KVC_ASSIGN_OR_RETURN(Json kv_cache, optionalObject(spec, "kvCache", "spec"));
    KVC_ASSIGN_OR_RETURN(Json pool_ref, optionalObject(kv_cache, "poolRef", "spec.kvCache"));
    KVC_ASSIGN_OR_RETURN(auto pool_name, optionalString(pool_ref, "name", "spec.kvCache.poolRef"));
    KVC_ASSIGN_OR_RETURN(auto connector,
                         optionalEnum(kv_cache, "connector", "spec.kvCache", kConnectors));
    out.kv_cache = KVCacheAttachment{pool_name.value_or(""),
                                     connector.value_or(std::string(kConnectorMooncake))};
  }
  KVC_ASSIGN_OR_RETURN(Json kv_transfer, optionalObject(spec, "kvTransfer", "spec"));
  KVC_ASSIGN_OR_RETURN(out.kv_transfer_protocol,
                       optionalString(kv_transfer, "protocol", "spec.kvTransfer"));
  KVC_ASSIGN_OR_RETURN(Json roles, optionalArray(spec, "roles", "spec"));
  for (std::size_t i = 0; i < roles.size(); ++i) {
    KVC_ASSIGN_OR_RETURN(auto role, roleFromJson(roles[i], itemPath("spec.roles", i)));
    out.roles.push_back(std::move(role));
  }
  if (present(spec, "router")) {
    KVC_ASSIGN_OR_RETURN(Json router, optionalObject(spec, "router", "spec"));
    ModelRouter parsed;
    KVC_ASSIGN_OR_RETURN(parsed.replicas, optionalInt(router, "replicas", "spec.router"));
    KVC_ASSIGN_OR_RETURN(parsed.extra_args, stringList(router, "extraArgs", "spec.router"));
    out.router = std::move(parsed);
  }
  return out;
}

Result<KVCacheAttachmentStatus> attachmentStatusFromJson(const Json& status) {
  KVCacheAttachmentStatus out;
  KVC_ASSIGN_OR_RETURN(Json kv_cache, optionalObject(status, "kvCache", "status"));
  KVC_ASSIGN_OR_RETURN(auto binding, optionalString(kv_cache, "binding", "status.kvCache"));
  KVC_ASSIGN_OR_RETURN(auto pool, optionalString(kv_cache, "pool", "status.kvCache"));
  out.binding = binding.value_or("");
  out.pool = pool.value_or("");
  if (present(kv_cache, "domain")) {
    KVC_ASSIGN_OR_RETURN(Json domain, optionalObject(kv_cache, "domain", "status.kvCache"));
    AttachedDomain echoed;
    KVC_ASSIGN_OR_RETURN(auto name, optionalString(domain, "name", "status.kvCache.domain"));
    KVC_ASSIGN_OR_RETURN(echoed.block_size,
                         optionalInt(domain, "blockSize", "status.kvCache.domain"));
    KVC_ASSIGN_OR_RETURN(auto dtype, optionalString(domain, "dtype", "status.kvCache.domain"));
    echoed.name = name.value_or("");
    echoed.dtype = dtype.value_or("");
    out.domain = std::move(echoed);
  }
  return out;
}

Result<std::vector<ModelDeploymentRoleStatus>> roleStatusesFromJson(const Json& status) {
  KVC_ASSIGN_OR_RETURN(Json list, optionalArray(status, "roles", "status"));
  std::vector<ModelDeploymentRoleStatus> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = itemPath("status.roles", i);
    KVC_RETURN_IF_ERROR(requireObject(list[i], at));
    ModelDeploymentRoleStatus role;
    KVC_ASSIGN_OR_RETURN(auto name, optionalString(list[i], "name", at));
    KVC_ASSIGN_OR_RETURN(auto kind, optionalString(list[i], "kind", at));
    role.name = name.value_or("");
    role.kind = kind.value_or("");
    KVC_ASSIGN_OR_RETURN(role.replicas, optionalInt(list[i], "replicas", at));
    KVC_ASSIGN_OR_RETURN(role.ready_replicas, optionalInt(list[i], "readyReplicas", at));
    KVC_ASSIGN_OR_RETURN(role.updated_replicas, optionalInt(list[i], "updatedReplicas", at));
    KVC_ASSIGN_OR_RETURN(role.unmanaged, optionalBool(list[i], "unmanaged", at));
    out.push_back(std::move(role));
  }
  return out;
}

Result<ModelDeployment::Status> statusFromJson(const Json& object) {
  ModelDeployment::Status out;
  KVC_ASSIGN_OR_RETURN(Json status, optionalObject(object, "status", ""));
  KVC_RETURN_IF_ERROR(internal::readStatusHead(status, out));
  KVC_ASSIGN_OR_RETURN(auto endpoint, optionalString(status, "endpoint", "status"));
  out.endpoint = endpoint.value_or("");
  if (present(status, "kvCache")) {
    KVC_ASSIGN_OR_RETURN(out.kv_cache, attachmentStatusFromJson(status));
  }
  KVC_ASSIGN_OR_RETURN(out.roles, roleStatusesFromJson(status));
  return out;
}

void putInt(Json& object, std::string_view field, const std::optional<std::int64_t>& value) {
  if (value) {
    object[std::string(field)] = *value;
  }
}

void putString(Json& object, std::string_view field, const std::string& value) {
  if (!value.empty()) {
    object[std::string(field)] = value;
  }
}

}  // namespace

Result<ModelDeployment> modelDeploymentFromJson(const Json& object) {
  ModelDeployment deployment;
  KVC_ASSIGN_OR_RETURN(deployment.metadata, internal::requiredMeta(object));
  KVC_ASSIGN_OR_RETURN(deployment.spec, specFromJson(object));
  KVC_ASSIGN_OR_RETURN(deployment.status, statusFromJson(object));
  return deployment;
}

Json modelDeploymentStatusToJson(const ModelDeployment::Status& status) {
  Json out = Json::object();
  internal::putPhase(out, status.observed_generation, status.phase, status.phase_message);
  if (!status.conditions.empty()) {
    out["conditions"] = conditionsToJson(status.conditions);
  }
  putString(out, "endpoint", status.endpoint);
  if (status.kv_cache) {
    Json kv_cache = Json::object();
    putString(kv_cache, "binding", status.kv_cache->binding);
    putString(kv_cache, "pool", status.kv_cache->pool);
    if (status.kv_cache->domain) {
      const AttachedDomain& d = *status.kv_cache->domain;
      Json domain = Json::object();
      putString(domain, "name", d.name);
      putInt(domain, "blockSize", d.block_size);
      putString(domain, "dtype", d.dtype);
      kv_cache["domain"] = std::move(domain);
    }
    out["kvCache"] = std::move(kv_cache);
  }
  if (!status.roles.empty()) {
    Json roles = Json::array();
    for (const ModelDeploymentRoleStatus& r : status.roles) {
      Json role = {{"name", r.name}};
      putString(role, "kind", r.kind);
      putInt(role, "replicas", r.replicas);
      putInt(role, "readyReplicas", r.ready_replicas);
      putInt(role, "updatedReplicas", r.updated_replicas);
      if (r.unmanaged) {
        role["unmanaged"] = *r.unmanaged;
      }
      roles.push_back(std::move(role));
    }
    out["roles"] = std::move(roles);
  }
  return out;
}

}  // namespace kvc::api
