#pragma once
// What every validating admission of our kinds shares between the AdmissionReview and the
// policy's verdict (quota_handlers.h for pools and Bindings, backend_handlers.h for backends):
// the operation judged, and the answer — allowed with the verdict's warnings, or one 422 Invalid
// refusal in the API's form (`<Kind> "<name>" is invalid: [...]`) with one cause per field error,
// each carrying its field path, and the details naming the object — so kubectl prints it as it
// prints the API's own validation: `The <Kind> "<name>" is invalid: <field>: <Type>: …`.

#include <string>
#include <string_view>

#include "kvc/common/status.h"
#include "kvc/policy/base/admission_verdict.h"
#include "kvc/webhook/admission.h"

namespace kvc::webhook {

// The API group of every kind these admissions judge.
inline constexpr std::string_view kGroup = "worker.gpustack.ai";

// UPDATE, else CREATE (the handlers admit every other operation before asking).
policy::AdmissionOperation operationOf(const AdmissionRequest& request);

// A 500 for a read the judgement needed that failed (anything but NotFound): never a verdict on
// the object. `what` names the read ("reading KVCachePool \"x\"").
AdmissionResponse readFailure(const std::string& uid, const Status& status,
                              const std::string& what);

AdmissionResponse verdictResponse(const std::string& uid, std::string_view kind,
                                  const std::string& name, const policy::AdmissionVerdict& verdict);

}  // namespace kvc::webhook
