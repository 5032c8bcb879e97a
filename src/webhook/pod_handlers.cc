#include "kvc/webhook/pod_handlers.h"

#include "kvc/policy/inject/freeze.h"

namespace kvc::webhook {

PodMutator::PodMutator(std::shared_ptr<const policy::ClusterView> cluster, SettingsSource settings,
                       std::shared_ptr<InjectionObserver> observer)
    : cluster_(std::move(cluster)),
      settings_(std::move(settings)),
      observer_(std::move(observer)) {}

AdmissionResponse PodMutator::handle(const AdmissionRequest& request) const {
  // Registered for CREATE on pods only; anything else reaching here is admitted untouched.
  if (request.operation != "CREATE" || request.resource != "pods" ||
      !request.sub_resource.empty() || !request.object.is_object()) {
    return allow(request.uid);
  }
  const auto start = std::chrono::steady_clock::now();
  std::string namespace_name = request.namespace_name;
  if (namespace_name.empty()) {
    namespace_name =
        request.object.value(Json::json_pointer("/metadata/namespace"), std::string("default"));
  }
  policy::Decision decision =
      policy::inject(request.object, namespace_name, *cluster_, settings_());
  AdmissionResponse response = allow(request.uid);
  switch (decision.verdict) {
    case policy::Verdict::NotOptedIn:
      break;
    case policy::Verdict::Injected:
      response.patch = Json::diff(request.object, decision.object);
      break;
    case policy::Verdict::Refused:
      response = deny(request.uid, 403, "Forbidden", decision.refusal->message);
      response.metric_reason = std::string(policy::refusalReasonName(decision.refusal->reason));
      break;
    case policy::Verdict::Failed:
      // An outage, not an answer: the API server reports it as an internal error, never as
      // "does not exist", and the Pod may be retried once the cluster can be read.
      response = deny(request.uid, 500, "InternalError",
                      "kvcache webhook could not resolve the Pod's Binding: " + decision.error +
                          ". Fix: retry once the API server answers");
      break;
  }
  if (observer_) {
    observer_->onInjection(request, decision, std::chrono::steady_clock::now() - start);
  }
  return response;
}

namespace {

AdmissionResponse refuse(const AdmissionRequest& request,
                         const std::vector<policy::FreezeViolation>& violations) {
  AdmissionResponse response =
      deny(request.uid, 422, "Invalid", policy::freezeMessage(request.name, violations));
  for (const policy::FreezeViolation& violation : violations) {
    response.causes.push_back({"FieldValueForbidden", violation.message, violation.field});
  }
  return response;
}

}  // namespace

AdmissionResponse validatePod(const AdmissionRequest& request) {
  if (request.resource != "pods") {
    return allow(request.uid);
  }
  std::vector<policy::FreezeViolation> violations;
  if (request.operation == "UPDATE" &&
      (request.sub_resource.empty() || request.sub_resource == "status")) {
    violations = policy::checkFreeze(request.old_object, request.object);
  } else if (request.operation == "CREATE" && request.sub_resource == "binding") {
    violations = policy::checkBindingWrites(request.object);
  }
  return violations.empty() ? allow(request.uid) : refuse(request, violations);
}

}  // namespace kvc::webhook
