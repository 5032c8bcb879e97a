#pragma once
// Deleting a child of ours in the foreground: the API server removes what the child owns (a
// Deployment's ReplicaSets and Pods) before the child itself, so "the child is gone" means its
// Pods are too. Guarded by the child's uid, so a same-named successor is never deleted. NotFound
// is success (it went meanwhile).

#include <stop_token>

#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/kube/client.h"

namespace kvc::controllers::internal {

Status deleteInForeground(const kube::Api& api, const Json& child, std::stop_token stop);

}  // namespace kvc::controllers::internal
