#pragma once
// A Binding's engine Pods, from the caches: the Pods the Pod webhook injected for it (the
// labelled Pods naming it, their engine taken from the injection record) and the replica Pods
// of the ModelDeployments attached to it (their engine from the deployment). Only Pods that
// still run; the reader and the pool pass both see a Binding's Pods through this one function.

#include <string>
#include <vector>

#include "kvc/runtime/store.h"

namespace kvc::controllers::internal {

struct EnginePod {
  runtime::ObjectPtr pod;
  std::string engine;  // "vllm" | "sglang" (policy::engineFamily)
};

struct EnginePodSources {
  const runtime::Cache* held_pods = nullptr;          // indexed kPodsByBinding
  const runtime::Cache* model_deployments = nullptr;  // indexed kModelDeploymentsByBinding
  const runtime::Cache* replica_pods = nullptr;       // indexed kReplicasByDeployment
};

// The engine Pods of the Binding `binding_key` ("ns/name"), sorted by name.
std::vector<EnginePod> enginePodsOf(const EnginePodSources& sources,
                                    const std::string& binding_key);

// The engine of one Pod of either source, "" when it is none of a Binding's engine Pods (no
// injection record, a ModelDeployment with no cache attached, an engine we do not read).
std::string engineOf(const EnginePodSources& sources, const Json& pod);

}  // namespace kvc::controllers::internal
