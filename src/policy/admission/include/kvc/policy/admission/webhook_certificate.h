#pragma once
// The self-managed webhook certificate (docs/install.md): what to do with the Secret that holds a
// CA and the serving certificate it signed, and how to bring a webhook configuration's caBundle
// up to date. Values in, decisions out; the keeper (kvc/webhook/certificate_keeper.h) reads the
// Secret, parses the certificates and carries the decision out.
//
// Renewal at two thirds of a lifetime (cert-manager's default): a serving certificate of one year
// is renewed four months before it expires, by the same CA, so the caBundle does not move; a CA of
// ten years is replaced together with a new serving certificate, and the caBundle then holds the
// new CA and the old one until the old one expires, so the replicas that still serve the previous
// certificate stay trusted while they reload.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "kvc/common/certificate_facts.h"
#include "kvc/common/json.h"

namespace kvc::policy {

using ::kvc::CertificateFacts;
using ::kvc::SystemTime;

inline constexpr std::chrono::hours kWebhookCaValidity{24 * 365 * 10};
inline constexpr std::chrono::hours kWebhookServingValidity{24 * 365};

struct CertificateSecretState {
  std::optional<CertificateFacts> ca;       // nullopt: absent or unreadable
  std::optional<CertificateFacts> serving;  // nullopt: absent or unreadable
};

enum class CertificateAction {
  Keep,          // both valid for more than a third of their lifetime, the names right
  IssueServing,  // a new serving certificate from the same CA
  IssueAll,      // a new CA and a new serving certificate
};

struct CertificatePlan {
  CertificateAction action = CertificateAction::Keep;
  std::string reason;  // for the log: why not Keep ("" when Keep)
};

// The DNS names the API server uses for the Service: <service>.<namespace>.svc and the
// cluster.local form.
std::vector<std::string> webhookDnsNames(const std::string& service,
                                         const std::string& namespace_name);

CertificatePlan planWebhookCertificate(const CertificateSecretState& state,
                                       const std::vector<std::string>& dns_names, SystemTime now);

// The JSON patch that sets every webhook's clientConfig.caBundle of `configuration` (a
// Mutating- or ValidatingWebhookConfiguration) to `ca_bundle_base64`, each replace guarded by a
// test of that webhook's name; nullopt when every caBundle already holds it.
std::optional<Json> caBundlePatch(const Json& configuration, const std::string& ca_bundle_base64);

}  // namespace kvc::policy
