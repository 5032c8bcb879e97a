#pragma once
// The external branch of the KVCacheBackend reconciler (connection.external; contract
// §2.5–§2.8): the store is observed, never run. One pass, observe → plan → act
// (policy/store/backend_plan.h decides):
//
//   observe  the backend as cached; the master through the spec's Admin endpoint — /health,
//            then, only while it serves, /metrics and /get_segments_detail: at most three
//            sequential reads, each with a 5 s deadline, no redirects.
//   act      the finalizer; the status (written only when it differs; a newer backend met by
//            the write is decided again with the same reading); then the pass is planned again
//            from the pools the written status names: a deleting backend that no pool uses
//            loses its finalizer (done), otherwise requeueAfter(resync), counted from its end.

#include <optional>
#include <set>
#include <stop_token>
#include <string>

#include "kvc/api/backend.h"
#include "kvc/controllers/backend_controller.h"
#include "kvc/policy/store/backend_plan.h"

namespace kvc::controllers::internal {

class ExternalBackend {
public:
  ExternalBackend(const BackendControllerConfig& config, const runtime::StatusWriter& status)
      : config_(config), status_(status) {}

  // `object` is the backend as cached; `gone` the pools of its usedBy that are definitely gone.
  Result<runtime::Action> reconcile(const Json& object, const api::KVCacheBackend& backend,
                                    const std::set<std::string>& gone, std::stop_token stop);

private:
  policy::ExternalBackendObservation observe(const api::KVCacheBackend& backend,
                                             const std::set<std::string>& gone) const;
  // Carries the plan out; nullopt when the pass is to be planned again (the status written).
  Result<std::optional<runtime::Action>> act(const Json& object,
                                             const policy::ExternalBackendPlan& plan,
                                             policy::ExternalBackendObservation& seen,
                                             std::stop_token stop);
  Status writeStatus(const policy::ExternalBackendPlan& plan,
                     policy::ExternalBackendObservation& seen, std::stop_token stop);

  const BackendControllerConfig& config_;
  const runtime::StatusWriter& status_;
};

}  // namespace kvc::controllers::internal
