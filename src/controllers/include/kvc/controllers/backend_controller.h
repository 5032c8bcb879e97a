#pragma once
// The KVCacheBackend reconciler, external branch (connection.external; contract §2.5–§2.8): the
// store is observed, never run. One pass:
//
//   1. A finalizer on the live backend.
//   2. status.endpoints copied from the spec.
//   3. The master read through its Admin endpoint — /health, then, only while it serves,
//      /metrics and /get_segments_detail: at most three sequential reads, each with a 5 s
//      deadline, no redirects — into capacity, members and the conditions LeaderAvailable,
//      CapacityObserved, MembersMounted, PoolWrites (policy::externalBackendStatus).
//   4. status.usedBy (written by the pool reconciler) pruned of pools that are definitely gone
//      (a live NotFound); Deletable from what is left.
//   5. The status written; a deleting backend that no pool uses loses its finalizer.
// The pass ends with requeueAfter(15 s), counted from its end.
//
// A managed backend (connection.managed) is not this reconciler's: it is left as it is for the
// managed-backend controller.

#include <chrono>
#include <stop_token>

#include "kvc/common/clock.h"
#include "kvc/controllers/store_access.h"
#include "kvc/kube/client.h"
#include "kvc/runtime/controller.h"
#include "kvc/runtime/metrics.h"
#include "kvc/runtime/status_writer.h"
#include "kvc/runtime/store.h"

namespace kvc::controllers {

inline constexpr std::string_view kBackendControllerName = "kvcachebackend";

struct BackendControllerConfig {
  kube::ClientPtr client;
  const runtime::Cache* backends = nullptr;
  const runtime::Cache* pools = nullptr;
  AdminClientFactory stores;
  runtime::Registry* metrics = nullptr;
  Clock::Duration resync = std::chrono::seconds(15);
  const Clock* clock = &realClock();
};

// runtime::Reconciler
class BackendReconciler final : public runtime::Reconciler {
public:
  explicit BackendReconciler(BackendControllerConfig config);
  Result<runtime::Action> reconcile(const runtime::Request& request,
                                    std::stop_token stop) override;

private:
  BackendControllerConfig config_;
  runtime::StatusWriter status_;
};

}  // namespace kvc::controllers
