#pragma once
// Validating admission of KVCacheBackend (contract §1 "Where validation lives" and "Update
// rules", §2.1, §2.2, §3.6, §3.7; the seed walkthrough's Steps 1, 4 and 5). Pure: the webhook's
// adapter hands over the objects of the review and the Setting kv-cache-backend-image, and this
// decides. Every violation is collected, so one refusal names them all; a message names the
// field and the fix.
//
// Flow: the objects are read as the API server sent them (raw JSON), because several rules
// judge what the api decoder does not model (every localDisks entry, a quantity that does not
// parse, whether a list moved). A quantity that does not parse is a field error, never a crash;
// any other shape the decoder refuses (a wrong type) is one field error naming its path.
//
// Update rules: a rule that judges a value the update did not change is skipped, so an object
// admitted under older rules is never stranded; the Setting is read again only when spec.image
// moved. An update that changes nothing under `spec` (a finalizer removal, a label) is admitted
// without judging anything. Updates of an object being deleted are judged like any other, so
// the freezes (connection branch, group order, medium, disk tier) hold during deletion.
//
// Image fallback: the leader has no image of its own, so a managed backend needs spec.image or
// the Setting whatever its groups declare; a group's own image serves that group only.

#include <optional>
#include <string>

#include "kvc/common/json.h"
#include "kvc/policy/base/admission_verdict.h"

namespace kvc::policy {

struct BackendAdmission {
  AdmissionOperation operation = AdmissionOperation::Create;
  Json object;                 // the KVCacheBackend as submitted
  std::optional<Json> old;     // UPDATE: the stored one
  std::string settings_image;  // the Setting kv-cache-backend-image ("" when cleared)
};

AdmissionVerdict admitBackend(const BackendAdmission& request);

}  // namespace kvc::policy
