#pragma once
// Kubernetes resource quantities ("8Gi", "16G", "1.5Ti", "500m") as whole byte counts.
//
// The operator reads capacities and ceilings as quantities and talks to the Mooncake master in
// bytes, so one parser serves both directions. Fractions round up, as Quantity.Value() does.

#include <cstdint>
#include <string>
#include <string_view>

#include "kvc/common/status.h"

namespace kvc {

// Parses a quantity into bytes. Refuses negatives, values past 2^63-1 and malformed text, with a
// message that quotes the input.
Result<std::int64_t> parseQuantityBytes(std::string_view text);

// Formats bytes in the largest binary-SI unit that divides them exactly ("16Gi", "1536Mi",
// "100"), which is how the API server canonicalises a BinarySI quantity.
std::string formatBinarySI(std::int64_t bytes);

// For people, rounded to one decimal: "256.0 MiB", "1.5 GiB", "512 B".
std::string humanBytes(std::int64_t bytes);

}  // namespace kvc
