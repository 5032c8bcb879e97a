#include "kvc/policy/base/admission_verdict.h"

#include "kvc/common/quantity.h"

namespace kvc::policy {

std::optional<FieldError> byteQuantityError(std::string_view field, const std::string& text,
                                            std::int64_t minimum, std::string_view below_minimum) {
  auto bytes = parseQuantityBytes(text);
  if (!bytes.ok()) {
    return FieldError{FieldErrorType::Invalid, std::string(field), text, bytes.status().message()};
  }
  if (*bytes < minimum) {
    return FieldError{FieldErrorType::Invalid, std::string(field), text,
                      below_minimum.empty()
                          ? std::string("must be greater than zero and at most 2^63-1 bytes")
                          : std::string(below_minimum)};
  }
  return std::nullopt;
}

}  // namespace kvc::policy
