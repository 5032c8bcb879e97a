#include "kvc/api/pool.h"

#include "fields.h"
#include "kvc/api/decode.h"

namespace kvc::api {
namespace {

Result<std::vector<PoolDomain>> domainsFromJson(const Json& list, std::string_view path) {
  std::vector<PoolDomain> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = std::string(path) + "[" + std::to_string(i) + "]";
    PoolDomain domain;
    KVC_ASSIGN_OR_RETURN(auto name, optionalString(list[i], "name", at));
    KVC_ASSIGN_OR_RETURN(Json binding, optionalObject(list[i], "binding", at));
    KVC_ASSIGN_OR_RETURN(auto namespace_name,
                         optionalString(binding, "namespace", joinPath(at, "binding")));
    KVC_ASSIGN_OR_RETURN(auto binding_name,
                         optionalString(binding, "name", joinPath(at, "binding")));
    KVC_ASSIGN_OR_RETURN(auto block_size, optionalInt(list[i], "blockSize", at));
    KVC_ASSIGN_OR_RETURN(auto dtype, optionalString(list[i], "dtype", at));
    KVC_ASSIGN_OR_RETURN(domain.blocks, optionalInt(list[i], "blocks", at));
    KVC_ASSIGN_OR_RETURN(domain.hit_rate, optionalString(list[i], "hitRate", at));
    domain.name = name.value_or("");
    domain.binding_namespace = namespace_name.value_or("");
    domain.binding_name = binding_name.value_or("");
    domain.block_size = block_size.value_or(0);
    domain.dtype = dtype.value_or("");
    out.push_back(std::move(domain));
  }
  return out;
}

Result<KVCachePool::Status> statusFromJson(const Json& object) {
  KVCachePool::Status out;
  KVC_ASSIGN_OR_RETURN(Json status, optionalObject(object, "status", ""));
  KVC_RETURN_IF_ERROR(internal::readStatusHead(status, out));
  KVC_ASSIGN_OR_RETURN(auto endpoint, optionalString(status, "clientEndpoint", "status"));
  out.client_endpoint = endpoint.value_or("");
  KVC_ASSIGN_OR_RETURN(Json usage, optionalObject(status, "usage", "status"));
  KVC_ASSIGN_OR_RETURN(out.usage_total, internal::optionalBytes(usage, "total", "status.usage"));
  KVC_ASSIGN_OR_RETURN(Json domains, optionalArray(status, "domains", "status"));
  KVC_ASSIGN_OR_RETURN(out.domains, domainsFromJson(domains, "status.domains"));
  KVC_ASSIGN_OR_RETURN(out.used_by,
                       objectReferencesFromJson(status.value("usedBy", Json()), "status.usedBy"));
  return out;
}

}  // namespace

Result<KVCachePool> poolFromJson(const Json& object) {
  KVCachePool pool;
  KVC_ASSIGN_OR_RETURN(pool.metadata, internal::requiredMeta(object));
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
  pool.spec.quota_total = total.value_or("");
  KVC_ASSIGN_OR_RETURN(pool.status, statusFromJson(object));
  return pool;
}

Json poolStatusToJson(const KVCachePool::Status& status) {
  Json out = Json::object();
  internal::putPhase(out, status.observed_generation, status.phase, status.phase_message);
  if (!status.conditions.empty()) {
    out["conditions"] = conditionsToJson(status.conditions);
  }
  if (!status.client_endpoint.empty()) {
    out["clientEndpoint"] = status.client_endpoint;
  }
  if (status.usage_total) {
    Json usage = Json::object();
    internal::putBytes(usage, "total", status.usage_total);
    out["usage"] = std::move(usage);
  }
  if (!status.domains.empty()) {
    Json domains = Json::array();
    for (const PoolDomain& d : status.domains) {
      Json domain = {{"name", d.name},
                     {"binding", {{"namespace", d.binding_namespace}, {"name", d.binding_name}}},
                     {"blockSize", d.block_size},
                     {"dtype", d.dtype}};
      if (d.blocks) {
        domain["blocks"] = *d.blocks;
      }
      if (d.hit_rate) {
        domain["hitRate"] = *d.hit_rate;
      }
      domains.push_back(std::move(domain));
    }
    out["domains"] = std::move(domains);
  }
  if (!status.used_by.empty()) {
    out["usedBy"] = objectReferencesToJson(status.used_by);
  }
  return out;
}

}  // namespace kvc::api
