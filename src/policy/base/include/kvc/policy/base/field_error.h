#pragma once
// Field errors of a validating admission, collected so that one refusal names every violation
// (apimachinery's field.ErrorList), and the one Invalid message the API server shows for them:
//
//   KVCachePoolBinding "team-b" is invalid: [spec.domain.name: Duplicate value: "default": …,
//   spec.quota.ceiling: Invalid value: "32Gi": …]

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvc::policy {

enum class FieldErrorType { Required, Invalid, Forbidden, Duplicate, NotFound };

struct FieldError {
  FieldErrorType type = FieldErrorType::Invalid;
  std::string field;                 // "spec.domain.name"
  std::optional<std::string> value;  // the value at fault, quoted in the message
  std::string detail;                // why, ending with the fix

  friend bool operator==(const FieldError&, const FieldError&) = default;
};

// "Required value", "Invalid value", "Forbidden", "Duplicate value", "Not found".
std::string_view fieldErrorTypeText(FieldErrorType type);
// The cause reason of the API ("FieldValueRequired", "FieldValueInvalid", …).
std::string_view fieldErrorReason(FieldErrorType type);
// `Type: "value": detail`: the message of the error's cause (the API's StatusCause carries the
// field beside it, and kubectl prints `field: message`).
std::string fieldErrorBody(const FieldError& error);
// `field: Type: "value": detail`.
std::string describeFieldError(const FieldError& error);
// `<Kind> "<name>" is invalid: [e1, e2, …]` (one error: without the brackets).
std::string invalidMessage(std::string_view kind, std::string_view name,
                           const std::vector<FieldError>& errors);

}  // namespace kvc::policy
