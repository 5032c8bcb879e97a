// The self-managed webhook certificate's decisions: when to keep, renew or replace, and the
// caBundle patch of a webhook configuration.
#include "kvc/policy/admission/webhook_certificate.h"

#include <gtest/gtest.h>

namespace kvc::policy {
namespace {

using namespace std::chrono_literals;

const SystemTime kNow = std::chrono::system_clock::from_time_t(1'800'000'000);
const std::vector<std::string> kNames =
    webhookDnsNames("kvcache-operator-webhook", "gpustack-system");

CertificateFacts valid(std::chrono::hours lifetime, std::chrono::hours age) {
  CertificateFacts facts;
  facts.not_before = kNow - age;
  facts.not_after = facts.not_before + lifetime;
  facts.dns_names = kNames;
  facts.signed_by_ca = true;
  facts.key_matches = true;
  return facts;
}

CertificateSecretState healthy() {
  return {valid(kWebhookCaValidity, 24h), valid(kWebhookServingValidity, 24h)};
}

TEST(WebhookCertificate, NamesTheServiceInBothSpellings) {
  EXPECT_EQ(kNames, (std::vector<std::string>{
                        "kvcache-operator-webhook.gpustack-system.svc",
                        "kvcache-operator-webhook.gpustack-system.svc.cluster.local"}));
}

TEST(WebhookCertificate, AHealthyPairIsKept) {
  const CertificatePlan plan = planWebhookCertificate(healthy(), kNames, kNow);
  EXPECT_EQ(plan.action, CertificateAction::Keep);
  EXPECT_EQ(plan.reason, "");
}

TEST(WebhookCertificate, AnEmptySecretGetsEverything) {
  EXPECT_EQ(planWebhookCertificate({}, kNames, kNow).action, CertificateAction::IssueAll);
}

TEST(WebhookCertificate, ACaWhoseKeyDoesNotMatchIsReplaced) {
  CertificateSecretState state = healthy();
  state.ca->key_matches = false;
  EXPECT_EQ(planWebhookCertificate(state, kNames, kNow).action, CertificateAction::IssueAll);
}

TEST(WebhookCertificate, TheServingCertificateIsRenewedAtTwoThirdsOfItsLifetime) {
  CertificateSecretState state = healthy();
  state.serving = valid(kWebhookServingValidity, kWebhookServingValidity * 2 / 3 - 1h);
  EXPECT_EQ(planWebhookCertificate(state, kNames, kNow).action, CertificateAction::Keep);
  state.serving = valid(kWebhookServingValidity, kWebhookServingValidity * 2 / 3 + 1h);
  const CertificatePlan plan = planWebhookCertificate(state, kNames, kNow);
  EXPECT_EQ(plan.action, CertificateAction::IssueServing);
  EXPECT_EQ(plan.reason, "the serving certificate expires within a third of its lifetime");
}

TEST(WebhookCertificate, TheCaIsReplacedAtTwoThirdsOfItsLifetime) {
  CertificateSecretState state = healthy();
  state.ca = valid(kWebhookCaValidity, kWebhookCaValidity * 2 / 3 + 1h);
  EXPECT_EQ(planWebhookCertificate(state, kNames, kNow).action, CertificateAction::IssueAll);
}

TEST(WebhookCertificate, AnExpiredOrNotYetValidServingCertificateIsRenewed) {
  CertificateSecretState state = healthy();
  state.serving = valid(kWebhookServingValidity, kWebhookServingValidity + 1h);
  EXPECT_EQ(planWebhookCertificate(state, kNames, kNow).action, CertificateAction::IssueServing);
  state.serving = valid(kWebhookServingValidity, -1h);
  EXPECT_EQ(planWebhookCertificate(state, kNames, kNow).action, CertificateAction::IssueServing);
}

TEST(WebhookCertificate, OtherNamesAnotherSignerOrAForeignKeyRenewTheServingCertificate) {
  for (auto spoil : std::vector<void (*)(CertificateFacts&)>{
           [](CertificateFacts& f) { f.dns_names = {"other.gpustack-system.svc"}; },
           [](CertificateFacts& f) { f.signed_by_ca = false; },
           [](CertificateFacts& f) { f.key_matches = false; }}) {
    CertificateSecretState state = healthy();
    spoil(*state.serving);
    EXPECT_EQ(planWebhookCertificate(state, kNames, kNow).action, CertificateAction::IssueServing);
  }
  CertificateSecretState missing = healthy();
  missing.serving.reset();
  EXPECT_EQ(planWebhookCertificate(missing, kNames, kNow).action, CertificateAction::IssueServing);
}

Json configuration() {
  return Json::parse(R"({"kind": "ValidatingWebhookConfiguration",
    "webhooks": [{"name": "a.example.com", "clientConfig": {"caBundle": "OLD"}},
                 {"name": "b.example.com", "clientConfig": {"service": {"name": "s"}}},
                 {"name": "c.example.com", "clientConfig": {"caBundle": "NEW"}}]})");
}

TEST(WebhookCertificate, TheCaBundlePatchTouchesOnlyStaleWebhooksEachGuardedByItsName) {
  const std::optional<Json> patch = caBundlePatch(configuration(), "NEW");
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ(*patch, Json::parse(R"([
    {"op": "test", "path": "/webhooks/0/name", "value": "a.example.com"},
    {"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": "NEW"},
    {"op": "test", "path": "/webhooks/1/name", "value": "b.example.com"},
    {"op": "add", "path": "/webhooks/1/clientConfig/caBundle", "value": "NEW"}])"));
}

TEST(WebhookCertificate, NoPatchWhenEveryCaBundleIsCurrent) {
  Json current = configuration();
  for (Json& hook : current["webhooks"]) {
    hook["clientConfig"]["caBundle"] = "NEW";
  }
  EXPECT_FALSE(caBundlePatch(current, "NEW").has_value());
  EXPECT_FALSE(caBundlePatch(Json::object(), "NEW").has_value());
}

}  // namespace
}  // namespace kvc::policy
