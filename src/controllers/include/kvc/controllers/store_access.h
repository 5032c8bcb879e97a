#pragma once
// How a controller reaches a store's master: a factory of admin clients by admin address, so
// that the controllers' tests can hand in a fake master and the operator a libcurl one with the
// contract's limits (5 s per request, no redirects, 8 MiB bodies) — over mutual TLS with the
// operator's certificate to a managed master (store_credentials.h).

#include <functional>
#include <memory>
#include <string>

#include "kvc/common/status.h"
#include "kvc/controllers/store_credentials.h"
#include "kvc/store/admin_client.h"

namespace kvc::controllers {

using AdminClientFactory =
    std::function<Result<std::unique_ptr<store::AdminClient>>(const std::string& admin_address)>;

// HttpAdminClient over libcurl, one per call (cheap: the transport is shared). Without a keeper,
// plain http:// to every address (tests of external masters).
AdminClientFactory httpAdminClients(std::shared_ptr<StoreCredentialKeeper> credentials = nullptr,
                                    std::string store_namespace = "");

}  // namespace kvc::controllers
