#pragma once
// X.509 for the certificates the operator keeps itself (OpenSSL): the webhook's (a CA and the
// serving certificate it signs) and the store admin API's (a CA, a serving certificate per
// leader and client certificates). Issue them, and read back what the renewal policies decide on
// (policy::planWebhookCertificate, policy::planStoreCredential). ECDSA P-256 keys, PEM text in
// and out.

#include <string>
#include <vector>

#include "kvc/common/certificate_facts.h"
#include "kvc/common/status.h"

namespace kvc::runtime {

struct KeyPair {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8
};

// A self-signed CA (basicConstraints CA:TRUE, keyCertSign) valid from `now` for `validity`.
Result<KeyPair> issueCa(const std::string& common_name, SystemTime now,
                        std::chrono::seconds validity);

// A serving certificate for `dns_names` (serverAuth), signed by `ca`.
Result<KeyPair> issueServing(const KeyPair& ca, const std::vector<std::string>& dns_names,
                             SystemTime now, std::chrono::seconds validity);

// A client certificate (clientAuth) signed by `ca`: the subject's common name is the caller's
// name, its organization (when not empty) the group the caller is authorized as, as Kubernetes
// reads client certificates.
Result<KeyPair> issueClient(const KeyPair& ca, const std::string& common_name,
                            const std::string& organization, SystemTime now,
                            std::chrono::seconds validity);

// The facts of the first certificate in `cert_pem`: validity, DNS names, whether `key_pem`
// belongs to it and (when `ca_pem` is not empty) whether a certificate in `ca_pem` signed it.
Result<CertificateFacts> inspectCertificate(const std::string& cert_pem, const std::string& key_pem,
                                            const std::string& ca_pem = {});

}  // namespace kvc::runtime
