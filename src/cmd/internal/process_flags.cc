#include "internal/process_flags.h"

#include <cctype>
#include <iostream>
#include <string>

namespace kvc::cmd::internal {

Result<Clock::Duration> parseDuration(std::string_view text, std::string_view flag) {
  auto bad = [&] {
    return invalidArgument(std::string(flag) + ": \"" + std::string(text) +
                           "\" is not a duration (e.g. 15s, 500ms, 2m)");
  };
  std::size_t unit = 0;
  while (unit < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[unit])) || text[unit] == '.')) {
    ++unit;
  }
  if (unit == 0) {
    return bad();
  }
  double value = 0;
  try {
    value = std::stod(std::string(text.substr(0, unit)));
  } catch (...) {
    return bad();
  }
  const std::string_view suffix = text.substr(unit);
  double seconds = 0;
  if (suffix == "ms") {
    seconds = value / 1000.0;
  } else if (suffix == "s") {
    seconds = value;
  } else if (suffix == "m") {
    seconds = value * 60.0;
  } else if (suffix == "h") {
    seconds = value * 3600.0;
  } else {
    return bad();
  }
  return std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(seconds));
}

void SignalStopper::logSignal(int sig) {
  std::cerr << "kvcache: received " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
            << ", shutting down\n";
}

}  // namespace kvc::cmd::internal
