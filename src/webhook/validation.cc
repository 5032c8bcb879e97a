#include "kvc/webhook/validation.h"

namespace kvc::webhook {

policy::AdmissionOperation operationOf(const AdmissionRequest& request) {
  return request.operation == "UPDATE" ? policy::AdmissionOperation::Update
                                       : policy::AdmissionOperation::Create;
}

AdmissionResponse readFailure(const std::string& uid, const Status& status,
                              const std::string& what) {
  return deny(uid, 500, "InternalError",
              what + " failed, so the request can be judged neither way (" + status.message() +
                  "); it is not a verdict on the object. Retry once the API server answers");
}

AdmissionResponse verdictResponse(const std::string& uid, std::string_view kind,
                                  const std::string& name,
                                  const policy::AdmissionVerdict& verdict) {
  AdmissionResponse response;
  if (verdict.allowed()) {
    response = allow(uid);
  } else {
    response = deny(uid, 422, "Invalid", policy::invalidMessage(kind, name, verdict.errors));
    for (const policy::FieldError& error : verdict.errors) {
      response.causes.push_back({std::string(policy::fieldErrorReason(error.type)),
                                 policy::fieldErrorBody(error), error.field});
    }
    response.details_group = std::string(kGroup);
    response.details_kind = std::string(kind);
    response.details_name = name;
  }
  response.warnings = verdict.warnings;
  return response;
}

}  // namespace kvc::webhook
