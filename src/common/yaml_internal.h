#pragma once
// Private to common/: what the YAML reader (yaml_read.cc) and writer (yaml.cc) share.

#include <string>

#include "kvc/common/json.h"

namespace kvc {

// Resolves a plain (unquoted) scalar the way Kubernetes' YAML reader does (YAML 1.1: `yes` is
// true, `0755` octal), so a manifest means here what it means to kubectl.
Json resolvePlain(const std::string& s);

}  // namespace kvc
