#include "kvc/webhook/backend_handlers.h"

#include "kvc/api/backend.h"
#include "kvc/policy/admission/backend_admission.h"
#include "kvc/webhook/validation.h"

namespace kvc::webhook {

BackendValidation::BackendValidation(SettingsSource settings) : settings_(std::move(settings)) {}

AdmissionResponse BackendValidation::admitBackend(const AdmissionRequest& request) const {
  if (request.operation != "CREATE" && request.operation != "UPDATE") {
    return allow(request.uid);
  }
  if (!request.object.is_object()) {
    return deny(request.uid, 400, "BadRequest",
                "KVCacheBackend: the review's object is not a JSON object");
  }
  policy::BackendAdmission admission;
  admission.operation = operationOf(request);
  admission.object = request.object;
  if (admission.operation == policy::AdmissionOperation::Update && request.old_object.is_object()) {
    admission.old = request.old_object;
  }
  admission.settings_image =
      settings_ ? settings_().kv_cache_backend_image : api::Settings{}.kv_cache_backend_image;
  std::string name = stringAt(request.object, {"metadata", "name"});
  if (name.empty()) {
    name = request.name;
  }
  return verdictResponse(request.uid, api::kKindBackend, name, policy::admitBackend(admission));
}

}  // namespace kvc::webhook
