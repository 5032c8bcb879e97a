#pragma once
// The vocabulary every validating admission of our kinds shares (quota_admission.h for pools
// and Bindings, backend_admission.h for backends): the operation judged, the verdict — every
// field error collected, so one refusal names them all, plus warnings for an admitted object —
// and the check of a byte-quantity field, so that each kind words a bad quantity the same way.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/policy/base/field_error.h"

namespace kvc::policy {

enum class AdmissionOperation { Create, Update };

struct AdmissionVerdict {
  std::vector<FieldError> errors;
  std::vector<std::string> warnings;

  bool allowed() const { return errors.empty(); }
};

// `text` as bytes within `minimum`..2^63-1, or the Invalid error for `field`: a quantity that
// does not parse (or is negative, or past 2^63-1) quotes the parser, whose message ends with the
// fix; one below `minimum` says `below_minimum`, by default "must be greater than zero and at
// most 2^63-1 bytes".
std::optional<FieldError> byteQuantityError(std::string_view field, const std::string& text,
                                            std::int64_t minimum = 1,
                                            std::string_view below_minimum = {});

}  // namespace kvc::policy
