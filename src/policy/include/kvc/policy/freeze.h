#pragma once
// The UPDATE freeze (seed: "The label and the two written annotations are frozen once the Pod
// exists"; contract §7.7).
//
// Injection runs at CREATE and only there, so the label that opts a Pod in and the two
// annotations the webhook wrote must not move afterwards — including on a terminating Pod, whose
// projected client-config file the kubelet keeps refreshing through the grace period. Everything
// else is admitted: other labels and annotations, finalizers, status, images.

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

// One message for all violations, in the API's Invalid form:
// `Pod "x" is invalid: [field: Forbidden: message, …]`.
std::string freezeMessage(std::string_view pod_name, const std::vector<FreezeViolation>& violations);

}  // namespace kvc::policy
