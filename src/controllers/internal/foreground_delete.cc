#include "internal/foreground_delete.h"

#include "kvc/kube/object.h"

namespace kvc::controllers::internal {

Status deleteInForeground(const kube::Api& api, const Json& child, std::stop_token stop) {
  kube::DeleteParams params;
  params.propagation_policy = "Foreground";
  params.preconditions = kube::Preconditions{kube::object::uid(child), ""};
  auto removed = api.remove(kube::object::name(child), params, stop);
  if (!removed.ok() && removed.error().reason() != kube::ErrorReason::NotFound) {
    return removed.error().status();
  }
  return okStatus();
}

}  // namespace kvc::controllers::internal
