#include "kvc/controllers/store_access.h"

#include "kvc/policy/store/store_workload.h"

namespace kvc::controllers {

StoreTarget storeTarget(const api::KVCacheBackend& backend, std::string admin_address,
                        const std::string& settings_image) {
  StoreTarget target{std::move(admin_address), "", false, backend.metadata.name};
  if (backend.spec.managed) {
    policy::StoreInputs inputs;
    inputs.settings_image = settings_image;
    target.plaintext = !policy::leaderLaunched(backend, inputs);
  } else {
    auto named = backend.metadata.annotations.find(std::string(api::kAdminTlsSecretAnnotation));
    if (named != backend.metadata.annotations.end()) {
      target.tls_secret = named->second;
    }
  }
  return target;
}

AdminClientFactory httpAdminClients(std::shared_ptr<StoreCredentialKeeper> credentials,
                                    std::string store_namespace, store::WriteFence fence) {
  std::shared_ptr<store::HttpTransport> transport = store::newCurlTransport();
  if (fence) {
    transport = store::newFencedTransport(std::move(transport), std::move(fence));
  }
  return [transport, credentials = std::move(credentials),
          store_namespace = std::move(store_namespace)](
             const StoreTarget& target) -> Result<std::unique_ptr<store::AdminClient>> {
    const std::string& address = target.admin_address;
    store::AdminClientOptions options;
    // A published image's master (target.plaintext) is reached without TLS.
    if (!target.plaintext && !target.tls_secret.empty()) {
      if (credentials == nullptr) {
        return Status(StatusCode::FailedPrecondition,
                      "no Secret can be read for " + std::string(api::kAdminTlsSecretAnnotation));
      }
      KVC_ASSIGN_OR_RETURN(options.tls, credentials->namedCredentials(target.tls_secret));
    } else if (!target.plaintext && credentials != nullptr &&
               isManagedAdminAddress(address, store_namespace)) {
      KVC_ASSIGN_OR_RETURN(options.tls, credentials->operatorCredentials());
    }
    KVC_ASSIGN_OR_RETURN(std::unique_ptr<store::HttpAdminClient> client,
                         store::HttpAdminClient::create(address, options, transport));
    return std::unique_ptr<store::AdminClient>(std::move(client));
  };
}

}  // namespace kvc::controllers
