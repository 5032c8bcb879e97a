#include "kvc/store/ledger.h"

#include <unordered_set>

#include "internal/json_fields.h"

namespace kvc::store {

std::optional<std::int64_t> TenantQuota::occupancyBytes() const {
  return used_bytes ? used_bytes : charged_bytes;
}

namespace {

using internal::malformed;

StoreResult<TenantQuota> parseEntry(const Json& obj, const std::string& where) {
  if (!obj.is_object()) {
    return malformed(where, "the entry is not an object");
  }
  TenantQuota entry;
  auto id = internal::readString(obj, "tenant_id", where, /*required=*/true);
  if (!id.ok()) {
    return id.error();
  }
  if (id->empty()) {
    return malformed(where, "\"tenant_id\" is empty");
  }
  entry.tenant_id = std::move(*id);
  const std::string at = where + " (tenant " + entry.tenant_id + ")";

  auto requested = internal::requireCount(obj, "requested_quota_bytes", at);
  if (!requested.ok()) {
    return requested.error();
  }
  entry.requested_quota_bytes = *requested;
  auto effective = internal::requireCount(obj, "effective_quota_bytes", at);
  if (!effective.ok()) {
    return effective.error();
  }
  entry.effective_quota_bytes = *effective;
  auto over = internal::readBool(obj, "over_quota", at, /*required=*/true);
  if (!over.ok()) {
    return over.error();
  }
  entry.over_quota = **over;
  auto explicit_policy = internal::readBool(obj, "has_explicit_policy", at, /*required=*/true);
  if (!explicit_policy.ok()) {
    return explicit_policy.error();
  }
  entry.has_explicit_policy = **explicit_policy;

  for (auto [key, field] : {std::pair{"used_bytes", &entry.used_bytes},
                            std::pair{"reserved_bytes", &entry.reserved_bytes},
                            std::pair{"committed_count", &entry.committed_count},
                            std::pair{"metadata_object_count", &entry.metadata_object_count},
                            std::pair{"charged_bytes", &entry.charged_bytes}}) {
    auto value = internal::optionalCount(obj, key, at);
    if (!value.ok()) {
      return value.error();
    }
    *field = *value;
  }
  auto closed = internal::readBool(obj, "admission_closed", at, /*required=*/false);
  if (!closed.ok()) {
    return closed.error();
  }
  entry.admission_closed = *closed;
  return entry;
}

// {"success":true,"data":...} -> data (which may be null or absent when `data_optional`).
StoreResult<Json> successData(std::string_view body, const std::string& where) {
  auto parsed = internal::parseJsonBody(body, where);
  if (!parsed.ok()) {
    return parsed.error();
  }
  Json& obj = *parsed;
  if (!obj.is_object()) {
    return malformed(where, "not a JSON object: " + excerpt(body));
  }
  auto success = internal::readBool(obj, "success", where, /*required=*/true);
  if (!success.ok()) {
    return success.error();
  }
  if (!**success) {
    return malformed(where, "a 200 answer with \"success\": false: " + excerpt(body));
  }
  const auto it = obj.find("data");
  if (it == obj.end()) {
    return Json();
  }
  return std::move(*it);
}

const std::string kLedgerWhat = "/api/v1/tenant_quotas";

}  // namespace

StoreResult<std::vector<TenantQuota>> parseTenantQuotaList(std::string_view body) {
  auto data = successData(body, kLedgerWhat);
  if (!data.ok()) {
    return data.error();
  }
  if (!data->is_array()) {
    return malformed(kLedgerWhat, "\"data\" is not an array");
  }
  std::vector<TenantQuota> entries;
  entries.reserve(data->size());
  std::unordered_set<std::string> seen;
  for (std::size_t i = 0; i < data->size(); ++i) {
    auto entry = parseEntry((*data)[i], kLedgerWhat + " data[" + std::to_string(i) + "]");
    if (!entry.ok()) {
      return entry.error();
    }
    if (!seen.insert(entry->tenant_id).second) {
      return malformed(kLedgerWhat, "tenant " + entry->tenant_id + " listed twice");
    }
    entries.push_back(std::move(*entry));
  }
  return entries;
}

StoreResult<TenantQuota> parseTenantQuotaEntry(std::string_view body) {
  auto data = successData(body, kLedgerWhat);
  if (!data.ok()) {
    return data.error();
  }
  if (data->is_null()) {
    return malformed(kLedgerWhat, "\"data\" is missing");
  }
  return parseEntry(*data, kLedgerWhat + " data");
}

StoreResult<std::optional<TenantQuota>> parseTenantQuotaDeleted(std::string_view body) {
  auto data = successData(body, kLedgerWhat);
  if (!data.ok()) {
    return data.error();
  }
  if (data->is_null()) {
    return std::optional<TenantQuota>();
  }
  auto entry = parseEntry(*data, kLedgerWhat + " data");
  if (!entry.ok()) {
    return entry.error();
  }
  return std::optional<TenantQuota>(std::move(*entry));
}

StoreError classifyLedgerRefusal(int http_status, std::string_view body, std::string_view what) {
  const std::string context(what);
  if (http_status == 503) {
    return StoreError(
        StoreErrorKind::ServicePlaneInactive,
        context + ": the master's service plane is not active (503): " + excerpt(body),
        http_status);
  }
  // A Mooncake refusal: {"success":false,"error_code":<int>,"error_message":"..."}.
  std::optional<std::int64_t> code;
  const auto parsed = internal::parseJsonBody(body, what);
  if (parsed.ok() && parsed->is_object()) {
    const auto it = parsed->find("error_code");
    if (it != parsed->end() && it->is_number_integer()) {
      code = it->get<std::int64_t>();
    }
  }
  const std::string detail = excerpt(body);
  if (!code) {
    if (http_status == 404) {
      return StoreError(StoreErrorKind::RouteNotServed,
                        context + ": the master does not serve " + kLedgerWhat +
                            " (404 without an error code; older than 0.3.12?): " + detail,
                        http_status);
    }
    return StoreError(
        StoreErrorKind::UnexpectedStatus,
        context + ": unexpected status " + std::to_string(http_status) + ": " + detail,
        http_status);
  }
  struct Rule {
    int status;
    std::int64_t code;
    StoreErrorKind kind;
    const char* meaning;
  };
  static constexpr Rule kRules[] = {
      {409, kErrUnavailableInCurrentMode, StoreErrorKind::MultiTenancyDisabled,
       "multi-tenancy is disabled on this master"},
      {400, kErrInvalidParams, StoreErrorKind::InvalidParams, "the master refused the parameters"},
      {404, kErrObjectNotFound, StoreErrorKind::TenantNotFound, "no such tenant in the ledger"},
      {409, kErrTenantNotEmpty, StoreErrorKind::TenantNotEmpty,
       "the tenant still holds objects or charge; its policy stays"},
      {409, kErrUnavailableInCurrentStatus, StoreErrorKind::TransientState,
       "the master is in a transient state"},
      {500, kErrPersistentFail, StoreErrorKind::PersistFailed,
       "the master could not persist the policy (is the policy file's directory writable?); "
       "nothing was applied"},
  };
  for (const Rule& rule : kRules) {
    if (rule.status == http_status && rule.code == *code) {
      return StoreError(rule.kind,
                        context + ": " + rule.meaning + " (" + std::to_string(http_status) +
                            ", error_code " + std::to_string(*code) + "): " + detail,
                        http_status, code);
    }
  }
  return StoreError(StoreErrorKind::UnexpectedStatus,
                    context + ": unexpected status " + std::to_string(http_status) +
                        " with error_code " + std::to_string(*code) + ": " + detail,
                    http_status, code);
}

}  // namespace kvc::store
