#include "kvc/common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <string>

namespace kvc {

Status initLogging(std::string_view level, LogFormat format) {
  const std::string name(level);
  const spdlog::level::level_enum parsed = spdlog::level::from_str(name);
  if (parsed == spdlog::level::off && name != "off") {
    return invalidArgument("log level \"" + name +
                           "\" is not one of trace, debug, info, warn, error, off");
  }
  auto logger = spdlog::stderr_color_mt("kvcache");
  spdlog::set_default_logger(logger);
  spdlog::set_level(parsed);
  if (format == LogFormat::JsonLines) {
    spdlog::set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","thread":%t,"msg":"%v"})",
        spdlog::pattern_time_type::utc);
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%L%$ %v", spdlog::pattern_time_type::utc);
  }
  return okStatus();
}

}  // namespace kvc
