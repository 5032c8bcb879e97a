#pragma once
// X.509 for the self-managed webhook certificate (OpenSSL): issue a CA, issue a serving
// certificate it signs, and read back what policy::planWebhookCertificate decides on. ECDSA P-256
// keys, PEM text in and out.

#include <string>
#include <vector>

#include "kvc/common/status.h"
#include "kvc/policy/admission/webhook_certificate.h"

namespace kvc::webhook {

struct KeyPair {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8
};

// A self-signed CA (basicConstraints CA:TRUE, keyCertSign) valid from `now` for `validity`.
Result<KeyPair> issueCa(const std::string& common_name, policy::SystemTime now,
                        std::chrono::seconds validity);

// A serving certificate for `dns_names` (serverAuth), signed by `ca`.
Result<KeyPair> issueServing(const KeyPair& ca, const std::vector<std::string>& dns_names,
                             policy::SystemTime now, std::chrono::seconds validity);

// The facts of the first certificate in `cert_pem`: validity, DNS names, whether `key_pem`
// belongs to it and (when `ca_pem` is not empty) whether a certificate in `ca_pem` signed it.
Result<policy::CertificateFacts> inspectCertificate(const std::string& cert_pem,
                                                    const std::string& key_pem,
                                                    const std::string& ca_pem = {});

}  // namespace kvc::webhook
