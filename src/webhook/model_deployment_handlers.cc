#include "kvc/webhook/model_deployment_handlers.h"

#include "kvc/api/model_deployment.h"
#include "kvc/policy/admission/model_deployment_admission.h"
#include "kvc/webhook/validation.h"

namespace kvc::webhook {

ModelDeploymentValidation::ModelDeploymentValidation(
    std::shared_ptr<const policy::ClusterView> cluster, SettingsSource settings,
    NamespaceLabelsSource namespace_labels)
    : cluster_(std::move(cluster)),
      settings_(std::move(settings)),
      namespace_labels_(std::move(namespace_labels)) {}

AdmissionResponse ModelDeploymentValidation::admitModelDeployment(
    const AdmissionRequest& request) const {
  if (request.operation != "CREATE" && request.operation != "UPDATE") {
    return allow(request.uid);
  }
  auto deployment = api::modelDeploymentFromJson(request.object);
  if (!deployment.ok()) {
    return deny(request.uid, 400, "BadRequest",
                "ModelDeployment: " + deployment.status().message());
  }
  policy::ModelDeploymentAdmission admission;
  admission.operation = operationOf(request);
  admission.deployment = std::move(deployment).value();
  if (admission.deployment.metadata.namespace_name.empty()) {
    admission.deployment.metadata.namespace_name = request.namespace_name;
  }
  if (admission.operation == policy::AdmissionOperation::Update) {
    auto old = api::modelDeploymentFromJson(request.old_object);
    if (!old.ok()) {
      return deny(request.uid, 400, "BadRequest",
                  "ModelDeployment (the stored object): " + old.status().message());
    }
    admission.old = std::move(old).value();
  }
  const api::Settings settings = settings_ ? settings_() : api::Settings{};
  admission.dtype_owned = settings.kv_cache_dtype_owned;
  admission.tcp_tw_reuse = settings.tcp_tw_reuse;
  const api::ModelDeployment& md = admission.deployment;
  // The Pod Security level judges the rendered roles, which only the spec moves: a finalizer
  // removal reads nothing.
  if (namespace_labels_ && (admission.operation == policy::AdmissionOperation::Create ||
                            admission.old->spec != md.spec)) {
    auto labels = namespace_labels_(md.metadata.namespace_name);
    if (!labels.ok()) {
      return readFailure(request.uid, labels.status(),
                         "reading the labels of namespace \"" + md.metadata.namespace_name +
                             "\" (its Pod Security level)");
    }
    admission.namespace_labels = labels->value_or(std::map<std::string, std::string>());
  }
  // Only a new deployment's binding is checked against the cluster (its transport); the block is
  // frozen afterwards.
  if (admission.operation == policy::AdmissionOperation::Create && md.spec.kv_cache &&
      !md.spec.kv_cache->pool_ref.empty() && cluster_ != nullptr) {
    auto found =
        policy::lookUpAttachment(*cluster_, md.metadata.namespace_name, md.spec.kv_cache->pool_ref);
    if (!found.ok()) {
      return readFailure(request.uid, found.status(), "reading what spec.kvCache.poolRef leads to");
    }
    admission.attachment = std::move(found).value();
  }
  std::string name = md.metadata.name.empty() ? request.name : md.metadata.name;
  return verdictResponse(request.uid, api::kKindModelDeployment, name,
                         policy::admitModelDeployment(admission));
}

}  // namespace kvc::webhook
