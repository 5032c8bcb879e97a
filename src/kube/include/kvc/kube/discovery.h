#pragma once
// Live discovery: what a server says about a group/version (its APIResourceList), read into the
// same ResourceType the static table in resource.h holds. Subresources ("pods/status") are
// skipped.

#include <stop_token>
#include <string_view>
#include <vector>

#include "kvc/kube/client.h"
#include "kvc/kube/error.h"
#include "kvc/kube/resource.h"

namespace kvc::kube {

// The resources of `group`/`version` ("" = the core group) as the server serves them.
ApiResult<std::vector<ResourceType>> discoverResources(const Client& client, std::string_view group,
                                                       std::string_view version,
                                                       std::stop_token stop = {});

// The resource of `kind` in `group`/`version`, from the server; NotFound when it is not served
// (a CRD that is not installed or not yet Established).
ApiResult<ResourceType> discoverResource(const Client& client, std::string_view group,
                                         std::string_view version, std::string_view kind,
                                         std::stop_token stop = {});

}  // namespace kvc::kube
