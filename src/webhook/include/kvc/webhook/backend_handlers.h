#pragma once
// The validating admission of KVCacheBackend (CREATE and UPDATE; contract §1, §2.1, §2.2, §3.6,
// §3.7): the adapter between an AdmissionReview and policy::admitBackend. It holds no API
// client: the only outside state a rule reads is the Setting kv-cache-backend-image, from the
// watched Settings, and the policy reads it only when spec.image moved (or on CREATE).
//
// Answers: an admission (with warnings), or one 422 Invalid refusal naming every field at fault
// — a field of the wrong type or a quantity that does not parse included, as a field error; a
// review whose object is not a JSON object at all is a 400. DELETE and CONNECT are not
// registered and are admitted. Updates of objects being deleted are judged like any other, so
// the freezes hold during deletion; an update that moves nothing under spec (a finalizer
// removal) is always admitted.

#include <functional>
#include <string_view>

#include "kvc/api/settings.h"
#include "kvc/webhook/admission.h"

namespace kvc::webhook {

inline constexpr std::string_view kValidateBackendPath =
    "/validate-worker-gpustack-ai-v1-kvcachebackend";

class BackendValidation {
public:
  using SettingsSource = std::function<api::Settings()>;

  // Without a source the built-in Settings apply (tests).
  explicit BackendValidation(SettingsSource settings);

  AdmissionResponse admitBackend(const AdmissionRequest& request) const;

private:
  SettingsSource settings_;
};

}  // namespace kvc::webhook
