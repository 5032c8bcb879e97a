#pragma once
// One cause of a failure the API reports (metav1.StatusCause): what an Invalid answer of the
// API server lists in Status.details.causes, and what our admission webhooks list in a refusal.

#include <string>

namespace kvc::api {

struct StatusCause {
  std::string reason;  // "FieldValueForbidden", "FieldValueRequired", "FieldManagerConflict", ...
  std::string message;
  std::string field;  // "spec.poolRef.name"

  friend bool operator==(const StatusCause&, const StatusCause&) = default;
};

}  // namespace kvc::api
