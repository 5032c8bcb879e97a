// X.509 issue and inspection of the certificates the operator keeps (the webhook's, the store
// admin API's), checked with OpenSSL's own verification (the facts the plans decide on).
#include "kvc/runtime/certificates.h"

#include <gtest/gtest.h>

namespace kvc::runtime {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string> kNames = {
    "kvcache-operator-webhook.gpustack-system.svc",
    "kvcache-operator-webhook.gpustack-system.svc.cluster.local"};

TEST(Certificates, AServingCertificateNamesTheServiceAndVerifiesAgainstItsCa) {
  const auto now = std::chrono::system_clock::now();
  auto ca = issueCa("test-ca", now, 24h * 365);
  ASSERT_TRUE(ca.ok()) << ca.status().message();
  auto serving = issueServing(*ca, kNames, now, 24h * 30);
  ASSERT_TRUE(serving.ok()) << serving.status().message();

  auto facts = inspectCertificate(serving->cert_pem, serving->key_pem, ca->cert_pem);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_EQ(facts->dns_names, kNames);
  EXPECT_TRUE(facts->signed_by_ca);
  EXPECT_TRUE(facts->key_matches);
  // Valid from five minutes back (clock skew) for the asked validity.
  EXPECT_LE(facts->not_before, now - 4min);
  EXPECT_NEAR(std::chrono::duration_cast<std::chrono::hours>(facts->not_after - now).count(),
              24 * 30, 1);

  auto ca_facts = inspectCertificate(ca->cert_pem, ca->key_pem);
  ASSERT_TRUE(ca_facts.ok());
  EXPECT_TRUE(ca_facts->key_matches);
  EXPECT_TRUE(ca_facts->dns_names.empty());
}

TEST(Certificates, AnotherCaOrAnotherKeyIsDetected) {
  const auto now = std::chrono::system_clock::now();
  auto ca = issueCa("test-ca", now, 24h);
  auto other = issueCa("other-ca", now, 24h);
  ASSERT_TRUE(ca.ok() && other.ok());
  auto serving = issueServing(*ca, kNames, now, 1h);
  ASSERT_TRUE(serving.ok());
  auto against_other = inspectCertificate(serving->cert_pem, other->key_pem, other->cert_pem);
  ASSERT_TRUE(against_other.ok());
  EXPECT_FALSE(against_other->signed_by_ca);
  EXPECT_FALSE(against_other->key_matches);
  // A bundle holding the other CA first and ours second still verifies (a CA rotation).
  auto in_bundle =
      inspectCertificate(serving->cert_pem, serving->key_pem, other->cert_pem + ca->cert_pem);
  ASSERT_TRUE(in_bundle.ok());
  EXPECT_TRUE(in_bundle->signed_by_ca);
}

TEST(Certificates, BadInputIsAnErrorNotACrash) {
  EXPECT_FALSE(inspectCertificate("not pem", "").ok());
  const auto now = std::chrono::system_clock::now();
  EXPECT_FALSE(issueServing(KeyPair{"x", "y"}, kNames, now, 1h).ok());
  auto ca = issueCa("test-ca", now, 24h);
  ASSERT_TRUE(ca.ok());
  EXPECT_FALSE(issueServing(*ca, {}, now, 1h).ok());
}

TEST(Certificates, AClientCertificateCarriesItsIdentityAsCommonName) {
  const auto now = std::chrono::system_clock::now();
  auto ca = issueCa("test-ca", now, 24h);
  ASSERT_TRUE(ca.ok());
  auto client = issueClient(*ca, "kvcache-operator", "kvcache:operator", now, 1h);
  ASSERT_TRUE(client.ok()) << client.status().message();
  auto facts = inspectCertificate(client->cert_pem, client->key_pem, ca->cert_pem);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->common_name, "kvcache-operator");
  EXPECT_EQ(facts->organization, "kvcache:operator");
  EXPECT_TRUE(facts->dns_names.empty());
  EXPECT_TRUE(facts->signed_by_ca);
  EXPECT_TRUE(facts->key_matches);
  EXPECT_FALSE(issueClient(*ca, "", "", now, 1h).ok());
}

}  // namespace
}  // namespace kvc::runtime
