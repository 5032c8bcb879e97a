#pragma once
// The smallest real controller: keeps status.observedGeneration equal to metadata.generation for
// every object of one kind (the operator runs it for KVCachePoolBinding).
//
// It writes that one field and nothing else, with server-side apply on the status subresource
// under its own field manager (kObservedGenerationManager), forced. Why SSA and not a merge
// patch: both leave every other status field alone, but SSA also records that this manager owns
// exactly status.observedGeneration, so the later status controllers (field manager
// "kvcache-operator") can own the rest without either side removing the other's fields, and a
// conflict on this one field is resolved by `force` rather than by a read-modify-write race.
// A separate manager name matters: an apply under "kvcache-operator" that omitted the other
// status fields would delete them.
//
// Level-based: it reads the cache, and writes only when the two numbers differ, so a pass over
// an unchanged world writes nothing.

#include <memory>
#include <stop_token>
#include <string_view>

#include "kvc/kube/client.h"
#include "kvc/runtime/controller.h"
#include "kvc/runtime/store.h"

namespace kvc::runtime {

inline constexpr std::string_view kObservedGenerationManager =
    "kvcache-operator-observed-generation";

// The apply intent for `object` (apiVersion, kind, name, namespace, status.observedGeneration).
Json observedGenerationIntent(const Json& object);

// Reconciler
class ObservedGenerationReconciler final : public Reconciler {
public:
  ObservedGenerationReconciler(kube::Api api, const Cache& cache) : api_(std::move(api)),
                                                                    cache_(cache) {}
  Result<Action> reconcile(const Request& request, std::stop_token stop) override;

private:
  kube::Api api_;
  const Cache& cache_;
};

}  // namespace kvc::runtime
