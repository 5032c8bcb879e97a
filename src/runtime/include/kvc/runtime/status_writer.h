#pragma once
// Writing an object's status (controller-runtime's StatusWriter), in one place for every
// controller: through the status subresource, under the one field manager (field_manager.h),
// only when something differs, and never over a write the reconciler did not see.
//
//   write(current, status)
//     `current` is the object the status was computed from (as cached, or as a patch returned
//     it); `status` is the whole desired status. status.observedGeneration is stamped from
//     current's metadata.generation: the generation this pass evaluated, so `kubectl wait`
//     learns that a spec was looked at only once a controller did look at it.
//     The two statuses are compared semantically (key order ignored): equal means no request
//     at all (Unchanged). Otherwise PUT …/status carrying current's resourceVersion
//     (Written, with the object the server returned).
//     A 409 Conflict — the object changed after `current` was read — is Aborted: nothing was
//     written, and the reconcile runs again from a fresh read (the controller requeues an
//     Aborted key at once). NotFound is Gone: the object was deleted meanwhile.
//
//   update(cache, key, compute)
//     The same with the re-read done here: `compute` derives the status from the cached object;
//     after a conflict the writer waits (up to kConflictWait) for the cache to move past the
//     version it used, then computes and writes again, up to kConflictAttempts times. For a
//     status two controllers write parts of (a Binding's usedBy and its figures; a backend's
//     usedBy and its observations): each keeps the other's part from the fresh object.
//
// Why PUT with a resourceVersion and not an apply: a whole-status write under one manager is
// what keeps "absent is not zero" true (a figure no longer observed disappears), and the
// resourceVersion is what stops a stale writer from silently undoing a newer one.

#include <chrono>
#include <functional>
#include <stop_token>
#include <string>

#include "kvc/common/clock.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/kube/client.h"
#include "kvc/runtime/metrics.h"
#include "kvc/runtime/store.h"

namespace kvc::runtime {

enum class StatusWriteOutcome { Unchanged, Written, Gone };

struct StatusWrite {
  StatusWriteOutcome outcome = StatusWriteOutcome::Unchanged;
  Json object;  // Written: the object as the server returned it; Unchanged: `current`
};

// The desired status with observedGeneration stamped, as it would be written.
Json stampedStatus(const Json& current, Json status);
// Semantic equality of two JSON values (object key order ignored).
bool sameJson(const Json& a, const Json& b);

class StatusWriter {
public:
  static constexpr int kConflictAttempts = 4;
  static constexpr std::chrono::milliseconds kConflictWait{2000};

  using ComputeStatus = std::function<Result<Json>(const Json& current)>;

  // Whether the writer stamps status.observedGeneration: yes for the object's own controller;
  // no for a controller that writes a part of another kind's status (a pool claiming its
  // backend in backend.status.usedBy), which has not evaluated that object's spec.
  enum class Generation { Stamp, Keep };

  // `resource` is the kind whose status is written; `metrics` (optional) counts writes as
  // kvcache_status_writes_total{resource, outcome}.
  StatusWriter(kube::ClientPtr client, kube::ResourceType resource, Registry* metrics = nullptr,
               const Clock& clock = realClock(), Generation generation = Generation::Stamp);

  Result<StatusWrite> write(const Json& current, Json status, std::stop_token stop = {}) const;
  Result<StatusWrite> update(const Cache& cache, const std::string& key,
                             const ComputeStatus& compute, std::stop_token stop = {}) const;

private:
  void count(std::string_view outcome) const;

  kube::ClientPtr client_;
  kube::ResourceType resource_;
  const Clock& clock_;
  Generation generation_;
  CounterFamily* writes_ = nullptr;
};

}  // namespace kvc::runtime
