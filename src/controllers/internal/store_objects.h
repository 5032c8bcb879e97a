#pragma once
// How the backend controller finds a managed store's objects in the operator namespace: the
// labels every rendered object and store Pod carries (app.kubernetes.io/name kv-cache-backend,
// instance <backend>, component leader | member-<i> | tier-clean-<i>), the informer cache of
// each kind (or none: then the kind is read live), and the inputs the store's renderers take.
// Reads only.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/labels.h"
#include "kvc/common/json.h"
#include "kvc/controllers/backend_controller.h"
#include "kvc/kube/resource.h"
#include "kvc/policy/store/backend_plan.h"
#include "kvc/policy/store/store_workload.h"
#include "kvc/runtime/controller.h"
#include "kvc/runtime/store.h"

namespace kvc::controllers::internal {

// Every managed store's objects and Pods in the operator namespace (the informers' selector).
inline constexpr std::string_view kStoreSelector = "app.kubernetes.io/name=kv-cache-backend";
inline constexpr std::string_view kInstanceLabel = "app.kubernetes.io/instance";
inline constexpr std::string_view kComponentLabel = "app.kubernetes.io/component";

using api::label;  // the label `key` of `object`, or "" (api/labels.h)

// app.kubernetes.io/name=kv-cache-backend,app.kubernetes.io/instance=<backend>
std::string instanceSelector(const std::string& backend);

// The informer cache of the store's objects of `kind`, or nullptr (then they are read live).
const runtime::Cache* childCache(const BackendControllerConfig& config,
                                 const kube::ResourceType& kind);

// The store's Pods of `backend` (from the Pod informer; none without one) whose component label
// is `component`.
std::vector<Json> storePods(const BackendControllerConfig& config, const std::string& backend,
                            const std::string& component);
// The note of the latest FailedMount Event about `pod` (this Pod, by uid), "" when none.
std::string mountFailureOf(const BackendControllerConfig& config, const Json& pod);

// The operator namespace and the Setting kv-cache-backend-image (its default without Settings).
policy::StoreInputs storeInputs(const BackendControllerConfig& config);

// "Deployment gpustack-system/mooncake-dram-leader"
std::string describe(const Json& object);

// What the queue does with the backend after a pass whose plan says `next`.
runtime::Action actionFor(policy::BackendNext next, const BackendControllerConfig& config);

// The whole seconds from `from` to `to` (RFC 3339 times); nullopt when either does not parse.
std::optional<std::int64_t> secondsBetween(const std::string& from, const std::string& to);

}  // namespace kvc::controllers::internal
