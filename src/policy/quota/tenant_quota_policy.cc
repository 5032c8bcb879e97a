#include "kvc/policy/quota/tenant_quota_policy.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>

#include "kvc/common/yaml.h"

namespace kvc::policy {
namespace {

// True when `text` is well-formed UTF-8 (no overlongs, no surrogates, ≤ U+10FFFF).
bool isValidUtf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= text.size()) {
      return false;  // truncated sequence
    }
    for (std::size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

std::string quoteName(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// The name as a message can carry it: control characters, and every byte of a name that is not
// valid UTF-8, written as \xNN (so the message itself stays valid text).
std::string printable(std::string_view name) {
  static constexpr char kHex[] = "0123456789abcdef";
  const bool utf8 = isValidUtf8(name);
  std::string out;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || (!utf8 && u >= 0x80)) {
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xF]);
    } else {
      out.push_back(c);
    }
  }
  return "\"" + out + "\"";
}

}  // namespace

Status validateTenantName(std::string_view name) {
  if (name.empty()) {
    return invalidArgument("a tenant name must not be empty");
  }
  if (name.front() == '_') {
    return invalidArgument("tenant name " + printable(name) +
                           " must not start with '_' (reserved by the store)");
  }
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return invalidArgument("tenant name " + printable(name) +
                             " must not contain control characters");
    }
  }
  if (!isValidUtf8(name)) {
    return invalidArgument("tenant name " + printable(name) + " is not valid UTF-8");
  }
  return okStatus();
}

Status validateQuotaBytes(std::int64_t bytes) {
  if (bytes < 1) {
    return invalidArgument("a tenant quota must be 1..9223372036854775807 bytes, got " +
                           std::to_string(bytes));
  }
  return okStatus();
}

Status validateTenantPolicies(const std::vector<TenantPolicy>& tenants) {
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const TenantPolicy& tenant = tenants[i];
    const std::string where = "tenants[" + std::to_string(i) + "]";
    if (Status status = validateTenantName(tenant.name); !status.ok()) {
      return status.withContext(where);
    }
    if (Status status = validateQuotaBytes(tenant.quota_bytes); !status.ok()) {
      return status.withContext(where + " (" + printable(tenant.name) + ")");
    }
    if (!seen.insert(tenant.name).second) {
      return invalidArgument(where + ": tenant name " + printable(tenant.name) +
                             " appears more than once");
    }
  }
  return okStatus();
}

Result<std::string> renderPolicyFile(std::vector<TenantPolicy> tenants) {
  KVC_RETURN_IF_ERROR(validateTenantPolicies(tenants));
  std::sort(tenants.begin(), tenants.end(),
            [](const TenantPolicy& a, const TenantPolicy& b) { return a.name < b.name; });
  if (tenants.empty()) {
    return std::string("version: 1\ntenants: []\n");
  }
  std::string out = "version: 1\ntenants:\n";
  for (const TenantPolicy& tenant : tenants) {
    out += "  - name: " + quoteName(tenant.name) + "\n";
    out += "    quota: " + std::to_string(tenant.quota_bytes) + "\n";
  }
  return out;
}

Result<std::int64_t> parsePolicyQuota(std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  if (digits == 0) {
    return invalidArgument("quota " + quoted + " must start with a whole number of bytes");
  }
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, number);
  if (ec != std::errc() || end != text.data() + digits) {
    return invalidArgument("quota " + quoted + " is past 2^63-1 bytes");
  }
  const std::string_view unit = text.substr(digits);
  int shift = -1;
  if (unit.empty() || unit == "B") {
    shift = 0;
  } else if (unit == "KB") {
    shift = 10;
  } else if (unit == "MB") {
    shift = 20;
  } else if (unit == "GB") {
    shift = 30;
  } else if (unit == "TB") {
    shift = 40;
  } else {
    return invalidArgument("quota " + quoted +
                           ": the unit must be B, KB, MB, GB or TB (binary, case-sensitive)");
  }
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (number > (kMax >> shift)) {
    return invalidArgument("quota " + quoted + " is past 2^63-1 bytes");
  }
  const auto bytes = static_cast<std::int64_t>(number << shift);
  KVC_RETURN_IF_ERROR(validateQuotaBytes(bytes));
  return bytes;
}

Result<std::vector<TenantPolicy>> parsePolicyFile(std::string_view text) {
  KVC_ASSIGN_OR_RETURN(auto documents, parseYamlDocuments(text));
  if (documents.size() != 1 || !documents.front().value.is_object()) {
    return invalidArgument(
        "a tenant quota policy is one YAML mapping with `version: 1` and "
        "`tenants:`");
  }
  const Json& doc = documents.front().value;
  const auto version = doc.find("version");
  if (version == doc.end() || version->is_null()) {
    return invalidArgument("the policy has no `version` (the master requires version: 1)");
  }
  if (!version->is_number_integer() || version->get<std::int64_t>() != 1) {
    return invalidArgument("unsupported policy version " + version->dump() + "; expected 1");
  }
  const auto list = doc.find("tenants");
  if (list == doc.end() || !list->is_array()) {
    return invalidArgument("`tenants` must be a YAML sequence (`tenants: []` when empty)");
  }
  std::vector<TenantPolicy> tenants;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& entry = (*list)[i];
    const std::string where = "tenants[" + std::to_string(i) + "]";
    if (!entry.is_object()) {
      return invalidArgument(where + " must be a mapping with `name` and `quota`");
    }
    const auto name = entry.find("name");
    if (name == entry.end() || !name->is_string()) {
      return invalidArgument(where +
                             ": `name` must be a string (quote names such as \"yes\" "
                             "or \"123\")");
    }
    const auto quota = entry.find("quota");
    TenantPolicy tenant;
    tenant.name = name->get<std::string>();
    if (quota == entry.end() || quota->is_null()) {
      return invalidArgument(where + ": `quota` is missing");
    }
    if (quota->is_number_unsigned() || quota->is_number_integer()) {
      if (quota->is_number_unsigned() &&
          quota->get<std::uint64_t>() >
              static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return invalidArgument(where + ": quota is past 2^63-1 bytes");
      }
      tenant.quota_bytes = quota->get<std::int64_t>();
    } else if (quota->is_string()) {
      auto bytes = parsePolicyQuota(quota->get<std::string>());
      if (!bytes.ok()) {
        return bytes.status().withContext(where);
      }
      tenant.quota_bytes = *bytes;
    } else if (quota->is_number_float()) {
      return invalidArgument(where + ": quota " + quota->dump() +
                             " is not a whole number of bytes in 1..2^63-1");
    } else {
      return invalidArgument(where +
                             ": `quota` must be a whole number of bytes or N{B,KB,MB,GB,TB}");
    }
    tenants.push_back(std::move(tenant));
  }
  KVC_RETURN_IF_ERROR(validateTenantPolicies(tenants));
  return tenants;
}

std::string tenantQuotaPolicyName(std::string_view backend) {
  return std::string(backend) + "-tenant-quota-policy";
}

Result<Json> tenantQuotaPolicyConfigMap(std::string_view backend, std::string_view namespace_name,
                                        std::vector<TenantPolicy> tenants) {
  KVC_ASSIGN_OR_RETURN(std::string document, renderPolicyFile(std::move(tenants)));
  return Json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata",
               {{"name", tenantQuotaPolicyName(backend)},
                {"namespace", std::string(namespace_name)},
                {"labels",
                 {{"app.kubernetes.io/name", "kv-cache-backend"},
                  {"app.kubernetes.io/instance", std::string(backend)},
                  {"app.kubernetes.io/component", "tenant-quota-policy"},
                  {"app.kubernetes.io/part-of", "gpustack-operator-worker"}}}}},
              {"data", {{std::string(kTenantQuotaPolicyKey), std::move(document)}}}};
}

}  // namespace kvc::policy
