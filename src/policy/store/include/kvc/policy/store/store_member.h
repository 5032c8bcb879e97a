#pragma once
// One member DaemonSet per group of a managed KVCacheBackend (contract §3.5, §3.7):
// `<b>-member-<i>`, `OnDelete`, its template stamped with kvcache.gpustack.ai/pod-spec-hash so the
// controller can delete the Pods whose hash differs.
//
// Design choice (DESIGN.md §2): the container runs `kvcache store member`, which starts
// `mc_store_rest_server` with the arguments after `--`, resolves `k8s://<ns>/<b>-leader` (Lease
// addressing) to the holder's address, and restarts the member on a failover; the tier's init
// container runs `kvcache store survey` through `sh -c` (the seed: "the survey runs `sh -c`, so
// the member image needs a shell"), the path single-quoted. The env is the contract's, in its
// order.

#include <string>

#include "kvc/api/backend.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/policy/store/store_workload.h"

namespace kvc::policy {

inline constexpr std::int64_t kTierBucketSizeLimitBytes = 16777216;  // 16 MiB, not a field
inline constexpr std::int64_t kTierBucketKeysLimit = 64;

// The DaemonSet of group `group`; InvalidArgument naming the field for a quantity that does not
// parse, FailedPrecondition when no image is set anywhere.
Result<Json> memberDaemonSet(const api::KVCacheBackend& backend, int group,
                             const StoreInputs& inputs);

// sha256 (hex) of the Pod template's canonical JSON without its nodeSelector and without the
// hash annotation itself: a nodeSelector edit re-schedules through the DaemonSet controller
// without restarting members elsewhere.
std::string podSpecHash(const Json& pod_template);

}  // namespace kvc::policy
