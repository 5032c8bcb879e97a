#include "kvc/policy/admission/webhook_certificate.h"

namespace kvc::policy {
namespace {

// Renew once less than a third of the lifetime is left.
bool nearExpiry(const CertificateFacts& facts, SystemTime now) {
  const auto lifetime = facts.not_after - facts.not_before;
  return facts.not_after - now < lifetime / 3;
}

bool validNow(const CertificateFacts& facts, SystemTime now) {
  return facts.not_before <= now && now < facts.not_after;
}

}  // namespace

std::vector<std::string> webhookDnsNames(const std::string& service,
                                         const std::string& namespace_name) {
  return {service + "." + namespace_name + ".svc",
          service + "." + namespace_name + ".svc.cluster.local"};
}

CertificatePlan planWebhookCertificate(const CertificateSecretState& state,
                                       const std::vector<std::string>& dns_names, SystemTime now) {
  if (!state.ca) {
    return {CertificateAction::IssueAll, "no readable CA in the Secret"};
  }
  if (!state.ca->key_matches) {
    return {CertificateAction::IssueAll, "the CA key does not belong to the CA certificate"};
  }
  if (!validNow(*state.ca, now) || nearExpiry(*state.ca, now)) {
    return {CertificateAction::IssueAll, "the CA expires within a third of its lifetime"};
  }
  if (!state.serving) {
    return {CertificateAction::IssueServing, "no readable serving certificate in the Secret"};
  }
  if (!state.serving->signed_by_ca) {
    return {CertificateAction::IssueServing, "the serving certificate is not signed by the CA"};
  }
  if (!state.serving->key_matches) {
    return {CertificateAction::IssueServing,
            "the serving key does not belong to the serving certificate"};
  }
  if (state.serving->dns_names != dns_names) {
    return {CertificateAction::IssueServing,
            "the serving certificate names other hosts than the webhook Service"};
  }
  if (!validNow(*state.serving, now) || nearExpiry(*state.serving, now)) {
    return {CertificateAction::IssueServing,
            "the serving certificate expires within a third of its lifetime"};
  }
  return {};
}

std::optional<Json> caBundlePatch(const Json& configuration, const std::string& ca_bundle_base64) {
  const auto hooks = configuration.find("webhooks");
  if (hooks == configuration.end() || !hooks->is_array()) {
    return std::nullopt;
  }
  Json patch = Json::array();
  for (std::size_t i = 0; i < hooks->size(); ++i) {
    const Json& hook = (*hooks)[i];
    const std::string current =
        hook.value(Json::json_pointer("/clientConfig/caBundle"), std::string());
    if (current == ca_bundle_base64) {
      continue;
    }
    const std::string at = "/webhooks/" + std::to_string(i);
    patch.push_back({{"op", "test"}, {"path", at + "/name"}, {"value", hook.value("name", "")}});
    patch.push_back(
        {{"op", "add"}, {"path", at + "/clientConfig/caBundle"}, {"value", ca_bundle_base64}});
  }
  if (patch.empty()) {
    return std::nullopt;
  }
  return patch;
}

}  // namespace kvc::policy
