#pragma once
// Process-wide structured logging (spdlog). Only the I/O layers and commands log; `policy` never
// does. Logs go to stderr so that command output on stdout stays machine-readable.

#include <string>
#include <string_view>

#include "kvc/common/status.h"

namespace kvc {

enum class LogFormat { Text, JsonLines };

// Sets the level ("trace", "debug", "info", "warn", "error", "off") and the format of the
// default logger. Unknown levels are an InvalidArgument naming the accepted ones.
// JsonLines writes one JSON object per line: {"time","level","thread","msg"}, the message
// escaped so that a quote or a newline in it never breaks the line.
Status initLogging(std::string_view level, LogFormat format = LogFormat::Text);

// The body of a JSON string for `text`: quotes, backslashes and control characters escaped
// (multi-byte UTF-8 passes through).
std::string escapeJsonString(std::string_view text);

}  // namespace kvc
