#pragma once
// The tenant-quota policy file read by the master's `file` connector
// (--tenant_quota_connector_uri): render, validate, parse, and write atomically.
//
// The document (reference/mooncake.md §6, contract.md §3.4):
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
// names double-quoted, quotas in plain bytes.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/status.h"

namespace kvc::store {

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

// Replaces `path` atomically: a temporary file in the same directory, written, flushed to disk,
// renamed over `path`, and the directory synced. Readers see the old or the new content, never
// a part. The directory must be writable (the master needs that too).
Status writePolicyFileAtomic(const std::string& path, std::string_view content);

}  // namespace kvc::store
