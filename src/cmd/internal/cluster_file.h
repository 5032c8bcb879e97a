#pragma once
// `--cluster FILE`: YAML/JSON documents (or `kind: List`s) standing in for the cluster —
// KVCacheBackend, KVCachePool and KVCachePoolBinding objects with their status, and optionally
// the `gpustack-settings` ConfigMap.

#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/settings.h"
#include "kvc/common/status.h"
#include "kvc/policy/inject/cluster_view.h"

namespace kvc::cmd {

struct ClusterFile {
  policy::ClusterSnapshot snapshot;
  api::Settings settings;
  std::vector<std::string> warnings;  // ignored documents and unknown Settings
};

// Errors name the file, the document and the field.
Result<ClusterFile> loadClusterFile(const std::string& path);
// The same for text already read from `path` (which only names it in errors).
Result<ClusterFile> parseClusterFile(std::string_view text, const std::string& path);

}  // namespace kvc::cmd
