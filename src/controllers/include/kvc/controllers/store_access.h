#pragma once
// How a controller reaches a store's master: a factory of admin clients by target, so that the
// controllers' tests can hand in a fake master and the operator a libcurl one with the contract's
// limits (5 s per request, no redirects, 8 MiB bodies) — over mutual TLS with the operator's
// certificate to a managed master (store_credentials.h), and with the certificate an external
// backend names (its annotation kvcache.gpustack.ai/admin-tls-secret) to its master.

#include <functional>
#include <memory>
#include <string>

#include "kvc/api/backend.h"
#include "kvc/common/status.h"
#include "kvc/controllers/store_credentials.h"
#include "kvc/store/admin_client.h"
#include "kvc/store/fenced_transport.h"

namespace kvc::controllers {

// Where an admin client goes.
struct StoreTarget {
  std::string admin_address;  // host:port
  // The Secret (operator namespace) of the client certificate to present; "" for none, or for a
  // managed master (the keeper's own credentials are used by address).
  std::string tls_secret;
  // A managed master on a published upstream image (policy/store/store_image.h): no launcher
  // serves its admin port over TLS, the master answers plain HTTP itself.
  bool plaintext = false;
  // The KVCacheBackend's name: labels the requests' metrics (internal/counted_admin_client.h).
  std::string backend;
};

// The target of `backend`'s master at `admin_address`: an external backend's annotation names
// its Secret; a managed backend names none, and is plaintext when its leader's image is not this
// project's build by `settings_image` (the Setting kv-cache-backend-image).
StoreTarget storeTarget(const api::KVCacheBackend& backend, std::string admin_address,
                        const std::string& settings_image);

using AdminClientFactory =
    std::function<Result<std::unique_ptr<store::AdminClient>>(const StoreTarget& target)>;

// HttpAdminClient over libcurl, one per call (cheap: the transport is shared). Without a keeper,
// plain http:// to every address (tests of external masters), and a target naming a Secret is an
// error (there is nothing to read it with). With a fence, every write is fenced by it
// (store/fenced_transport.h): none is sent after this replica's leadership has ended.
AdminClientFactory httpAdminClients(std::shared_ptr<StoreCredentialKeeper> credentials = nullptr,
                                    std::string store_namespace = "", store::WriteFence fence = {});

}  // namespace kvc::controllers
