#pragma once
// Query parameters of the API's verbs (after kube-rs `kube-core/src/params.rs`). Plain values:
// the request builder turns them into a URL and refuses combinations the server would refuse.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "kvc/common/json.h"

namespace kvc::kube {

// How a list reads: RV "" is a consistent (quorum) read, "0" any cached state, otherwise
// "not older than" / "exactly" that version according to `resource_version_match`.
struct ListParams {
  std::string label_selector;
  std::string field_selector;
  std::optional<std::int64_t> limit;  // page size; pages continue with continue_token
  std::string continue_token;
  std::string resource_version;
  std::string resource_version_match;  // "", "NotOlderThan" or "Exact"
  std::optional<std::int64_t> timeout_seconds;
};

struct WatchParams {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;        // resume after this version ("" = start now)
  std::int64_t timeout_seconds = 290;  // the server closes the stream after this
  bool allow_bookmarks = true;
};

// Parameters of create and replace (PUT).
struct PostParams {
  std::string field_manager;
  bool dry_run = false;
  std::string field_validation;  // "", "Ignore", "Warn" or "Strict"
};

struct Preconditions {
  std::string uid;
  std::string resource_version;
};

struct DeleteParams {
  std::string propagation_policy;  // "", "Orphan", "Background" or "Foreground"
  std::optional<std::int64_t> grace_period_seconds;
  std::optional<Preconditions> preconditions;
  bool dry_run = false;
};

// The four patch strategies; the body and its content type follow from the alternative.
struct MergePatch {  // application/merge-patch+json (RFC 7386)
  Json body;
};
struct JsonPatch {  // application/json-patch+json (RFC 6902): an array of operations
  Json operations;
};
struct StrategicMergePatch {  // application/strategic-merge-patch+json (built-in kinds only)
  Json body;
};
struct ApplyPatch {  // application/apply-patch+yaml: server-side apply of a full intent
  Json body;
};
using Patch = std::variant<MergePatch, JsonPatch, StrategicMergePatch, ApplyPatch>;

struct PatchParams {
  std::string field_manager;  // required for ApplyPatch
  bool force = false;         // ApplyPatch only: take ownership of conflicting fields
  bool dry_run = false;
  std::string field_validation;

  // Server-side apply as `manager`, optionally forcing conflicts.
  static PatchParams apply(std::string manager, bool force = false) {
    PatchParams p;
    p.field_manager = std::move(manager);
    p.force = force;
    return p;
  }
};

}  // namespace kvc::kube
