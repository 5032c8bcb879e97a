#include "kvc/controllers/store_access.h"

namespace kvc::controllers {

AdminClientFactory httpAdminClients() {
  std::shared_ptr<store::HttpTransport> transport = store::newCurlTransport();
  return [transport](const std::string& address) -> Result<std::unique_ptr<store::AdminClient>> {
    KVC_ASSIGN_OR_RETURN(std::unique_ptr<store::HttpAdminClient> client,
                         store::HttpAdminClient::create(address, {}, transport));
    return std::unique_ptr<store::AdminClient>(std::move(client));
  };
}

}  // namespace kvc::controllers
