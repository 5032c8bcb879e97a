#pragma once
// Kubernetes' two time formats (metav1.Time and metav1.MicroTime), formatted and parsed. Pure.

#include <chrono>
#include <string>
#include <string_view>

#include "kvc/common/status.h"

namespace kvc::kube {

// RFC 3339 with microseconds, UTC ("2024-05-01T12:00:00.123456Z"): metav1.MicroTime.
std::string formatMicroTime(std::chrono::system_clock::time_point t);
// RFC 3339 in seconds ("2024-05-01T12:00:00Z"): metav1.Time.
std::string formatTime(std::chrono::system_clock::time_point t);
// Parses either form (fractions optional, "Z" or a numeric offset).
Result<std::chrono::system_clock::time_point> parseTime(std::string_view text);

}  // namespace kvc::kube
