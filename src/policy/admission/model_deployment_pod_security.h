#pragma once
// Private to ModelDeployment admission (model_deployment_admission.h): whether the Pods of each
// role would pass the Pod Security level of the deployment's namespace.
//
// Flow: the level comes from the namespace's labels (enforcedPodSecurityLevel); each role is
// rendered by the controller's own renderer (renderModelDeployment) without a Binding — the
// attachment adds only a downwardAPI volume, an env and arguments, which no level refuses — and
// with the Setting model-deployment-tcp-tw-reuse as the webhook reads it; each role's Pod template
// is evaluated (evaluatePodSecurity). What the renderer would refuse and admission refuses on its
// own (a role of size > 1, an additional volume without exactly one source, no image anywhere) is
// set aside first, so one refusal still names every field at fault.
//
// Each violation becomes a field error naming what causes it: spec.roles[i].privileged,
// spec.roles[i].additionalVolumes[k].hostPath, the Setting model-deployment-tcp-tw-reuse (on
// spec.roles[i]); what no ModelDeployment field sets (restricted's runAsNonRoot, seccomp,
// capabilities, allowPrivilegeEscalation) is one error on metadata.namespace saying the level
// cannot run the workload. Each names the namespace, the level, its label and the fix.

#include <vector>

#include "kvc/policy/admission/model_deployment_admission.h"
#include "kvc/policy/base/field_error.h"

namespace kvc::policy {

// None when request.namespace_labels is nullopt or the level is privileged, or when the engine is
// invalid (refused on its own). On UPDATE, a violation the stored role of the same name had
// already, in the same place of its Pod, is not refused again.
std::vector<FieldError> modelDeploymentPodSecurityErrors(const ModelDeploymentAdmission& request);

}  // namespace kvc::policy
