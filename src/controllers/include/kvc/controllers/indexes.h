#pragma once
// The cache indexes the controllers look objects up by — those of our kinds are api/indexes.h,
// shared with the webhooks — and the informer projection of the labelled Pods that hold
// Bindings. One definition each, so every registration of a shared informer asks for the same
// cache.

#include <array>
#include <string>
#include <vector>

#include "kvc/api/indexes.h"
#include "kvc/common/json.h"
#include "kvc/runtime/informer.h"

namespace kvc::controllers {

using api::bindingDomain;
using api::bindingPool;
using api::kBindingsByDomain;
using api::kBindingsByPool;
using api::kPoolsByBackend;
using api::poolBackends;

// Pod -> "<namespace>/<kvcache.gpustack.ai/binding annotation>".
inline constexpr const char* kPodsByBinding = "binding";

std::vector<std::string> podBinding(const Json& pod);

// What the controllers read of a labelled Pod (plus the identity every projection keeps): its
// Binding annotation and phase (what holds a deleting Binding), and what the engine counter
// reader needs — the injection record, the container annotation, the Pod IP, the conditions and
// each container's name, command, args and ports. About 1 KiB a Pod in the cache.
runtime::Transform heldPodProjection();
// What a projection keeps of each container for an engine's metrics port
// (policy/usage/engine_target.h): its name, command, args and ports, not its environment or
// mounts.
inline constexpr std::array<const char*, 4> kEngineContainerFields = {
    "/spec/containers/*/name", "/spec/containers/*/command", "/spec/containers/*/args",
    "/spec/containers/*/ports"};
// The selector of that informer: the injection opt-in label.
std::string heldPodSelector();

// Event (events.k8s.io) -> the name of the object it is about (regarding.name).
inline constexpr const char* kEventsByObject = "regarding";

std::vector<std::string> eventObject(const Json& event);

// A Pod that still runs, or may: not Succeeded or Failed.
bool podActive(const Json& pod);

}  // namespace kvc::controllers
