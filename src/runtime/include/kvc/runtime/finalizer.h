#pragma once
// Finalizers go through one function (STYLE.md §6.12; kube-rs runtime/finalizer.rs,
// controller-runtime pkg/finalizer).
//
// reconcileWithFinalizer(api, object, finalizer, apply, cleanup):
//
//   object state                           what happens
//   live, finalizer absent                 add the finalizer, return Action::done(): the patch
//                                          produces a watch event and the next pass applies
//   live, finalizer present                apply(object)
//   deleting, finalizer present            cleanup(object); when it returns Action::done()
//                                          remove the finalizer; a requeue action means
//                                          "not finished yet": the finalizer stays
//   deleting, finalizer absent             nothing (not ours to hold)
//
// Guarantees:
//   - apply never runs on an object the API server could delete without running cleanup
//     (the finalizer was observed on the object first);
//   - the finalizer is removed only after cleanup succeeded;
//   - both patches are JSON patches guarded by a `test` of metadata.finalizers (or of its
//     absence), so a concurrent change to the finalizer list fails the patch with 422 Invalid
//     instead of clobbering another controller's finalizer; the caller retries from a fresh
//     read (the error is returned as Aborted).
// Assumption: apply and cleanup are idempotent — either may run again after a crash or a
// failed patch.

#include <functional>
#include <stop_token>
#include <string_view>

#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/kube/client.h"
#include "kvc/runtime/controller.h"

namespace kvc::runtime {

using FinalizerStep = std::function<Result<Action>(const Json& object)>;

Result<Action> reconcileWithFinalizer(const kube::Api& api, const Json& object,
                                      std::string_view finalizer, const FinalizerStep& apply,
                                      const FinalizerStep& cleanup, std::stop_token stop = {});

bool hasFinalizer(const Json& object, std::string_view finalizer);

// The guarded JSON patches themselves (pure, so their exact shape is unit-tested).
// Adding: [test /metadata/finalizers == current (null when absent), add].
Json addFinalizerPatch(const Json& object, std::string_view finalizer);
// Removing: [test /metadata/finalizers == current, replace with the list minus `finalizer`].
// Empty when the finalizer is not on the object.
Json removeFinalizerPatch(const Json& object, std::string_view finalizer);

// Applies the patches; a failed `test` (422) or a conflict comes back as Aborted.
Status addFinalizer(const kube::Api& api, const Json& object, std::string_view finalizer,
                    std::stop_token stop = {});
Status removeFinalizer(const kube::Api& api, const Json& object, std::string_view finalizer,
                       std::stop_token stop = {});

}  // namespace kvc::runtime
