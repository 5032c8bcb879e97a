#include "kvc/api/binding.h"

#include "fields.h"
#include "kvc/api/decode.h"

namespace kvc::api {
namespace {

Result<KVCachePoolBinding::Status> statusFromJson(const Json& object) {
  KVCachePoolBinding::Status out;
  KVC_ASSIGN_OR_RETURN(Json status, optionalObject(object, "status", ""));
  KVC_RETURN_IF_ERROR(internal::readStatusHead(status, out));
  KVC_ASSIGN_OR_RETURN(out.requested_quota,
                       internal::optionalBytes(status, "requestedQuota", "status"));
  KVC_ASSIGN_OR_RETURN(out.effective_quota,
                       internal::optionalBytes(status, "effectiveQuota", "status"));
  KVC_ASSIGN_OR_RETURN(out.usage, internal::optionalBytes(status, "usage", "status"));
  KVC_ASSIGN_OR_RETURN(out.over_quota, optionalBool(status, "overQuota", "status"));
  KVC_ASSIGN_OR_RETURN(out.blocks, optionalInt(status, "blocks", "status"));
  KVC_ASSIGN_OR_RETURN(out.hit_rate, optionalString(status, "hitRate", "status"));
  KVC_ASSIGN_OR_RETURN(out.used_by,
                       objectReferencesFromJson(status.value("usedBy", Json()), "status.usedBy"));
  return out;
}

}  // namespace

Result<KVCachePoolBinding> bindingFromJson(const Json& object) {
  KVCachePoolBinding binding;
  KVC_ASSIGN_OR_RETURN(binding.metadata, internal::requiredMeta(object));
  KVC_ASSIGN_OR_RETURN(Json spec, optionalObject(object, "spec", ""));
  KVC_ASSIGN_OR_RETURN(Json pool_ref, optionalObject(spec, "poolRef", "spec"));
  KVC_ASSIGN_OR_RETURN(auto pool_name, optionalString(pool_ref, "name", "spec.poolRef"));
  binding.spec.pool_ref = pool_name.value_or("");
  KVC_ASSIGN_OR_RETURN(Json quota, optionalObject(spec, "quota", "spec"));
  KVC_ASSIGN_OR_RETURN(auto ceiling, optionalQuantity(quota, "ceiling", "spec.quota"));
  binding.spec.quota_ceiling = ceiling.value_or("");
  KVC_ASSIGN_OR_RETURN(Json domain, optionalObject(spec, "domain", "spec"));
  KVC_ASSIGN_OR_RETURN(auto domain_name, optionalString(domain, "name", "spec.domain"));
  KVC_ASSIGN_OR_RETURN(auto block_size, optionalInt(domain, "blockSize", "spec.domain"));
  KVC_ASSIGN_OR_RETURN(auto dtype, optionalString(domain, "dtype", "spec.domain"));
  binding.spec.domain.name = domain_name.value_or(std::string(kDefaultDomainName));
  binding.spec.domain.block_size = block_size.value_or(0);
  binding.spec.domain.dtype = dtype.value_or("");
  KVC_ASSIGN_OR_RETURN(binding.status, statusFromJson(object));
  return binding;
}

Json bindingStatusToJson(const KVCachePoolBinding::Status& status) {
  Json out = Json::object();
  internal::putPhase(out, status.observed_generation, status.phase, status.phase_message);
  if (!status.conditions.empty()) {
    out["conditions"] = conditionsToJson(status.conditions);
  }
  internal::putBytes(out, "requestedQuota", status.requested_quota);
  internal::putBytes(out, "effectiveQuota", status.effective_quota);
  internal::putBytes(out, "usage", status.usage);
  if (status.over_quota) {
    out["overQuota"] = *status.over_quota;
  }
  if (status.blocks) {
    out["blocks"] = *status.blocks;
  }
  if (status.hit_rate) {
    out["hitRate"] = *status.hit_rate;
  }
  if (!status.used_by.empty()) {
    out["usedBy"] = objectReferencesToJson(status.used_by);
  }
  return out;
}

}  // namespace kvc::api
