#pragma once
// The UPDATE freeze (seed: "The label and the two written annotations are frozen once the Pod
// exists"; contract §7.7).
//
// Injection runs at CREATE and only there, so the label that opts a Pod in and the two
// annotations the webhook wrote must not move afterwards — including on a terminating Pod, whose
// projected client-config file the kubelet keeps refreshing through the grace period. Everything
// else is admitted: other labels and annotations, finalizers, status, images.
//
// Three API paths write a Pod's metadata, and the freeze covers each (docs/webhook.md, "What
// the freeze covers"): an update of `pods`, an update of `pods/status` (the API server keeps
// label and annotation changes made there), and a `pods/binding` CREATE, which copies the
// Binding's labels and annotations onto a Pod that is not yet scheduled. `pods/ephemeralcontainers`
// and `pods/resize` drop metadata changes before validation, so they cannot move the keys.

#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/json.h"

namespace kvc::policy {

struct FreezeViolation {
  std::string field;    // "metadata.labels[kvcache.gpustack.ai/inject]"
  std::string message;  // why the edit is forbidden, ending with the way out
};

// Every violation of the freeze by the update old -> new; empty when it is admitted. Pods
// neither old nor new opted in are admitted whatever they carry.
std::vector<FreezeViolation> checkFreeze(const Json& old_pod, const Json& new_pod);

// Every one of the three keys a pods/binding Binding would write onto its Pod. Stricter than
// checkFreeze, which admits any metadata on a Pod that never opted in: a Binding is a
// scheduler's placement, no scheduler writes these keys, and judging by the Pod would need a
// read the API server does not send; so any Binding that carries one is refused.
std::vector<FreezeViolation> checkBindingWrites(const Json& binding);

// One message for all violations, in the API's Invalid form:
// `Pod "x" is invalid: [field: Forbidden: message, …]`.
std::string freezeMessage(std::string_view pod_name,
                          const std::vector<FreezeViolation>& violations);

}  // namespace kvc::policy
