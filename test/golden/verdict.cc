#include "verdict.h"

#include <string>

#include "kvc/policy/base/field_error.h"

namespace kvc::golden {
namespace {

std::string_view typeName(policy::FieldErrorType type) {
  switch (type) {
    case policy::FieldErrorType::Required:
      return "Required";
    case policy::FieldErrorType::Invalid:
      return "Invalid";
    case policy::FieldErrorType::Forbidden:
      return "Forbidden";
    case policy::FieldErrorType::Duplicate:
      return "Duplicate";
    case policy::FieldErrorType::NotFound:
      return "NotFound";
  }
  return "?";
}

}  // namespace

Json verdictJson(const policy::AdmissionVerdict& verdict, std::string_view kind,
                 std::string_view name) {
  Json errors = Json::array();
  for (const policy::FieldError& error : verdict.errors) {
    Json entry = {{"type", std::string(typeName(error.type))}, {"field", error.field}};
    if (error.value) {
      entry["value"] = *error.value;
    }
    entry["detail"] = error.detail;
    errors.push_back(std::move(entry));
  }
  Json out = {{"allowed", verdict.allowed()}, {"errors", errors}};
  if (!verdict.allowed()) {
    out["invalidMessage"] = policy::invalidMessage(kind, name, verdict.errors);
  }
  out["warnings"] = verdict.warnings;
  return out;
}

}  // namespace kvc::golden
