#pragma once
// Process-wide structured logging (spdlog). Only the I/O layers and commands log; `policy` never
// does. Logs go to stderr so that command output on stdout stays machine-readable.

#include <string_view>

#include "kvc/common/status.h"

namespace kvc {

enum class LogFormat { Text, JsonLines };

// Sets the level ("trace", "debug", "info", "warn", "error", "off") and the format of the
// default logger. Unknown levels are an InvalidArgument naming the accepted ones.
Status initLogging(std::string_view level, LogFormat format = LogFormat::Text);

}  // namespace kvc
