#include "kvc/controllers/store_access.h"

namespace kvc::controllers {

AdminClientFactory httpAdminClients(std::shared_ptr<StoreCredentialKeeper> credentials,
                                    std::string store_namespace) {
  std::shared_ptr<store::HttpTransport> transport = store::newCurlTransport();
  return [transport, credentials = std::move(credentials),
          store_namespace = std::move(store_namespace)](
             const std::string& address) -> Result<std::unique_ptr<store::AdminClient>> {
    store::AdminClientOptions options;
    if (credentials != nullptr && isManagedAdminAddress(address, store_namespace)) {
      KVC_ASSIGN_OR_RETURN(options.tls, credentials->operatorCredentials());
    }
    KVC_ASSIGN_OR_RETURN(std::unique_ptr<store::HttpAdminClient> client,
                         store::HttpAdminClient::create(address, options, transport));
    return std::unique_ptr<store::AdminClient>(std::move(client));
  };
}

}  // namespace kvc::controllers
