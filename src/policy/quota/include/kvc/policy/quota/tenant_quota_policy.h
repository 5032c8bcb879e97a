#pragma once
// The tenant-quota policy document a master's `file` connector reads
// (--tenant_quota_connector_uri), and the ConfigMap that seeds it for a managed backend
// (contract §3.4): render, validate, parse. Pure; store/policy_file.h writes it to disk.
//
// The document (reference/mooncake.md §6):
//
//   version: 1
//   tenants:
//     - name: "team-a"
//       quota: 268435456
//
// and the empty ledger is `version: 1` with `tenants: []`. The master refuses to start on a file
// that is missing, lacks `version: 1`, or holds an invalid entry, so nothing is rendered unless
// every entry is valid: a name is non-empty valid UTF-8, does not start with `_` and has no
// control character (bytes below 0x20, and 0x7f); a quota is 1..2^63-1 bytes; a name may appear
// once (the duplicate is reported at its second occurrence). Tenants are written sorted by name,
// names double-quoted, quotas in plain bytes. The same validators guard Binding ceilings and pool
// totals at admission.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::policy {

struct TenantPolicy {
  std::string name;
  std::int64_t quota_bytes = 0;

  friend bool operator==(const TenantPolicy&, const TenantPolicy&) = default;
};

// InvalidArgument naming the rule the name breaks.
Status validateTenantName(std::string_view name);
// InvalidArgument unless 1 ≤ bytes (the type bounds it by 2^63-1).
Status validateQuotaBytes(std::int64_t bytes);
// Every entry, then uniqueness; the message names the entry's position and name.
Status validateTenantPolicies(const std::vector<TenantPolicy>& tenants);

// The document, tenants sorted by name. InvalidArgument when validation fails.
Result<std::string> renderPolicyFile(std::vector<TenantPolicy> tenants);

// Reads a quota as the master does: a positive integer with an optional binary, case-sensitive
// unit B, KB, MB, GB or TB ("1MB" = 1048576; "MiB", "mb" and "1 MB" are refused).
Result<std::int64_t> parsePolicyQuota(std::string_view text);

// Reads a policy document (ours or the master's rewrite of it) with the master's rules:
// `version` must be 1, `tenants` a sequence of {name, quota}.
Result<std::vector<TenantPolicy>> parsePolicyFile(std::string_view text);

// The ConfigMap `<backend>-tenant-quota-policy` in `namespace_name`, key
// `tenant-quota-policy.yaml`, holding the rendered document, labelled like the backend's other
// objects (app.kubernetes.io/name=kv-cache-backend, instance=<backend>,
// component=tenant-quota-policy, part-of=gpustack-operator-worker). The owner reference and the
// ownership note are added when it is applied (runtime/owned.h). Nothing is rendered when a
// tenant is invalid.
inline constexpr std::string_view kTenantQuotaPolicyKey = "tenant-quota-policy.yaml";
std::string tenantQuotaPolicyName(std::string_view backend);
Result<Json> tenantQuotaPolicyConfigMap(std::string_view backend, std::string_view namespace_name,
                                        std::vector<TenantPolicy> tenants);

}  // namespace kvc::policy
