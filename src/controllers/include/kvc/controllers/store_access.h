#pragma once
// How a controller reaches a store's master: a factory of admin clients by admin address, so
// that the controllers' tests can hand in a fake master and the operator a libcurl one with the
// contract's limits (5 s per request, no redirects, 8 MiB bodies).

#include <functional>
#include <memory>
#include <string>

#include "kvc/common/status.h"
#include "kvc/store/admin_client.h"

namespace kvc::controllers {

using AdminClientFactory =
    std::function<Result<std::unique_ptr<store::AdminClient>>(const std::string& admin_address)>;

// HttpAdminClient over libcurl, one per call (cheap: the transport is shared).
AdminClientFactory httpAdminClients();

}  // namespace kvc::controllers
