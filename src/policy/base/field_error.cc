#include "kvc/policy/base/field_error.h"

namespace kvc::policy {

std::string_view fieldErrorTypeText(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::Required:
      return "Required value";
    case FieldErrorType::Invalid:
      return "Invalid value";
    case FieldErrorType::Forbidden:
      return "Forbidden";
    case FieldErrorType::Duplicate:
      return "Duplicate value";
    case FieldErrorType::NotFound:
      return "Not found";
  }
  return "Invalid value";
}

std::string_view fieldErrorReason(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::Required:
      return "FieldValueRequired";
    case FieldErrorType::Invalid:
      return "FieldValueInvalid";
    case FieldErrorType::Forbidden:
      return "FieldValueForbidden";
    case FieldErrorType::Duplicate:
      return "FieldValueDuplicate";
    case FieldErrorType::NotFound:
      return "FieldValueNotFound";
  }
  return "FieldValueInvalid";
}

std::string fieldErrorBody(const FieldError& error) {
  std::string out(fieldErrorTypeText(error.type));
  if (error.value) {
    out += ": \"" + *error.value + "\"";
  }
  if (!error.detail.empty()) {
    out += ": " + error.detail;
  }
  return out;
}

std::string describeFieldError(const FieldError& error) {
  return error.field + ": " + fieldErrorBody(error);
}

std::string invalidMessage(std::string_view kind, std::string_view name,
                           const std::vector<FieldError>& errors) {
  std::string out = std::string(kind) + " \"" + std::string(name) + "\" is invalid: ";
  if (errors.size() == 1) {
    return out + describeFieldError(errors.front());
  }
  out += "[";
  for (std::size_t i = 0; i < errors.size(); ++i) {
    out += (i == 0 ? "" : ", ") + describeFieldError(errors[i]);
  }
  return out + "]";
}

}  // namespace kvc::policy
