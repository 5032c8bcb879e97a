#pragma once
// The validating admission of ModelDeployment (CREATE and UPDATE; contract §1 "Update rules",
// §7.3, §8): the adapter between an AdmissionReview and policy::admitModelDeployment. What a rule
// reads from outside: the Settings model-deployment-kv-cache-dtype-owned and
// model-deployment-tcp-tw-reuse (the watched Settings); on CREATE with spec.kvCache what the
// Binding leads to — its pool and the pool's backend — through the webhook's cluster view
// (informer caches, live on a miss); and, on CREATE or an UPDATE that moves the spec, the labels
// of the deployment's namespace, whose Pod Security level its roles' Pods must meet (the
// namespaces informer, live on a miss). A read that fails for any reason but NotFound is an
// internal error, never a verdict on the object; a missing Binding is admitted with a warning
// (the controller reports it); a missing namespace has no level.
//
// Answers: an admission (with warnings), or one 422 Invalid refusal naming every field at fault;
// a review whose object does not decode as a ModelDeployment is a 400. DELETE and CONNECT are not
// registered and are admitted; an update that moves neither spec, labels nor annotations (a
// finalizer removal) is always admitted.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kvc/api/settings.h"
#include "kvc/policy/inject/cluster_view.h"
#include "kvc/webhook/admission.h"

namespace kvc::webhook {

inline constexpr std::string_view kValidateModelDeploymentPath =
    "/validate-worker-gpustack-ai-v1-modeldeployment";

class ModelDeploymentValidation {
public:
  using SettingsSource = std::function<api::Settings()>;
  // The labels of a namespace; nullopt: it does not exist (LiveNamespaceLabels).
  using NamespaceLabelsSource =
      std::function<Result<std::optional<std::map<std::string, std::string>>>(
          std::string_view namespace_name)>;

  // Without a settings source the built-in Settings apply; without a namespace-labels source no
  // Pod Security level is judged (tests).
  ModelDeploymentValidation(std::shared_ptr<const policy::ClusterView> cluster,
                            SettingsSource settings,
                            NamespaceLabelsSource namespace_labels = nullptr);

  AdmissionResponse admitModelDeployment(const AdmissionRequest& request) const;

private:
  std::shared_ptr<const policy::ClusterView> cluster_;
  SettingsSource settings_;
  NamespaceLabelsSource namespace_labels_;
};

}  // namespace kvc::webhook
