#pragma once
// RFC 4648 base64 (standard alphabet), the encoding of kubeconfig `*-data` fields and of an
// AdmissionReview's JSON patch.

#include <string>
#include <string_view>

#include "kvc/common/status.h"

namespace kvc {

// Encodes with padding, as the API server expects.
std::string base64Encode(std::string_view bytes);

// Decodes with or without padding; whitespace (line breaks of PEM-style wrapping) is ignored.
// Any other character outside the alphabet, data after padding, or a dangling 6-bit group is
// refused.
Result<std::string> base64Decode(std::string_view text);

}  // namespace kvc
