#pragma once
// Writing the tenant-quota policy file a master's `file` connector reads
// (--tenant_quota_connector_uri). The document itself — rendering, validation and parsing —
// is pure and lives in policy/tenant_quota_policy.h; this is the I/O.

#include <string>
#include <string_view>

#include "kvc/common/status.h"

namespace kvc::store {

// Replaces `path` atomically: a temporary file in the same directory, written, flushed to disk,
// renamed over `path`, and the directory synced. Readers see the old or the new content, never
// a part. The directory must be writable (the master needs that too).
Status writePolicyFileAtomic(const std::string& path, std::string_view content);

}  // namespace kvc::store
