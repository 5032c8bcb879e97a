#include "kvc/runtime/certificates.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "x509_subject.h"

namespace kvc::runtime {
namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;
using StorePtr = std::unique_ptr<X509_STORE, Deleter<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX_free>>;

Status opensslError(const std::string& what) { return internalError(what + " (OpenSSL)"); }

BioPtr readBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string bioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

Result<KeyPtr> newKey() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) {
    return opensslError("generating an ECDSA P-256 key");
  }
  return key;
}

std::chrono::seconds sinceEpoch(SystemTime t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch());
}

bool addExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) {
    return false;
  }
  const bool added = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return added;
}

bool addNameEntry(X509_NAME* name, const char* field, const std::string& value) {
  return X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                    reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                    0) == 1;
}

// A certificate for `key`'s public half, named `common_name` (in `organization` when not empty),
// valid [now - 5 min, now + validity) (the margin absorbs clock skew between the operator's
// replicas and whoever checks the certificate).
Result<X509Ptr> newCertificate(EVP_PKEY* key, const std::string& common_name,
                               const std::string& organization, SystemTime now,
                               std::chrono::seconds validity) {
  X509Ptr cert(X509_new());
  unsigned char serial[16];
  if (!cert || RAND_bytes(serial, sizeof serial) != 1) {
    return opensslError("creating a certificate");
  }
  serial[0] &= 0x7f;  // a positive serial
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  const bool serial_set =
      bn != nullptr && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  const auto start = sinceEpoch(now) - std::chrono::minutes(5);
  if (!serial_set || X509_set_version(cert.get(), 2) != 1 ||
      ASN1_TIME_set(X509_getm_notBefore(cert.get()), start.count()) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()), (sinceEpoch(now) + validity).count()) ==
          nullptr ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return opensslError("filling a certificate");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  if ((!organization.empty() && !addNameEntry(name, "O", organization)) ||
      !addNameEntry(name, "CN", common_name)) {
    return opensslError("naming a certificate");
  }
  return cert;
}

Result<KeyPair> toPem(X509* cert, EVP_PKEY* key) {
  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  BioPtr key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio || PEM_write_bio_X509(cert_bio.get(), cert) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return opensslError("writing PEM");
  }
  return KeyPair{bioText(cert_bio.get()), bioText(key_bio.get())};
}

SystemTime toTime(const ASN1_TIME* t) {
  struct tm tm = {};
  ASN1_TIME_to_tm(t, &tm);
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::vector<X509Ptr> readCertificates(const std::string& pem) {
  std::vector<X509Ptr> out;
  BioPtr bio = readBio(pem);
  while (bio) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) {
      break;
    }
    out.push_back(std::move(cert));
  }
  return out;
}

}  // namespace

Result<KeyPair> issueCa(const std::string& common_name, SystemTime now,
                        std::chrono::seconds validity) {
  KVC_ASSIGN_OR_RETURN(KeyPtr key, newKey());
  KVC_ASSIGN_OR_RETURN(X509Ptr cert, newCertificate(key.get(), common_name, "", now, validity));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  if (!addExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !addExtension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !addExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash") ||
      X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return opensslError("signing the CA");
  }
  return toPem(cert.get(), key.get());
}

namespace {

// A leaf certificate named `common_name`, signed by the first certificate of `ca`, with the
// extended key usage `usage` and, when not empty, the subjectAltName `san`.
Result<KeyPair> issueLeaf(const KeyPair& ca, const std::string& common_name,
                          const std::string& organization, const char* usage,
                          const std::string& san, SystemTime now, std::chrono::seconds validity) {
  std::vector<X509Ptr> ca_certs = readCertificates(ca.cert_pem);
  BioPtr ca_key_bio = readBio(ca.key_pem);
  KeyPtr ca_key(PEM_read_bio_PrivateKey(ca_key_bio.get(), nullptr, nullptr, nullptr));
  if (ca_certs.empty() || !ca_key) {
    return invalidArgument("the CA certificate or key is not readable PEM");
  }
  X509* issuer = ca_certs.front().get();
  KVC_ASSIGN_OR_RETURN(KeyPtr key, newKey());
  KVC_ASSIGN_OR_RETURN(X509Ptr cert,
                       newCertificate(key.get(), common_name, organization, now, validity));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer));
  if (!addExtension(cert.get(), issuer, NID_basic_constraints, "critical,CA:FALSE") ||
      !addExtension(cert.get(), issuer, NID_key_usage, "critical,digitalSignature") ||
      !addExtension(cert.get(), issuer, NID_ext_key_usage, usage) ||
      (!san.empty() && !addExtension(cert.get(), issuer, NID_subject_alt_name, san.c_str())) ||
      !addExtension(cert.get(), issuer, NID_authority_key_identifier, "keyid:always") ||
      X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
    return opensslError(std::string("signing the ") + usage + " certificate");
  }
  return toPem(cert.get(), key.get());
}

}  // namespace

Result<KeyPair> issueServing(const KeyPair& ca, const std::vector<std::string>& dns_names,
                             SystemTime now, std::chrono::seconds validity) {
  if (dns_names.empty()) {
    return invalidArgument("a serving certificate needs at least one DNS name");
  }
  std::string san;
  for (const std::string& name : dns_names) {
    san += (san.empty() ? "DNS:" : ",DNS:") + name;
  }
  return issueLeaf(ca, dns_names.front(), "", "serverAuth", san, now, validity);
}

Result<KeyPair> issueClient(const KeyPair& ca, const std::string& common_name,
                            const std::string& organization, SystemTime now,
                            std::chrono::seconds validity) {
  if (common_name.empty()) {
    return invalidArgument("a client certificate needs a common name");
  }
  return issueLeaf(ca, common_name, organization, "clientAuth", "", now, validity);
}

Result<CertificateFacts> inspectCertificate(const std::string& cert_pem, const std::string& key_pem,
                                            const std::string& ca_pem) {
  std::vector<X509Ptr> certs = readCertificates(cert_pem);
  if (certs.empty()) {
    return invalidArgument("no PEM certificate");
  }
  X509* cert = certs.front().get();
  CertificateFacts facts;
  facts.not_before = toTime(X509_get0_notBefore(cert));
  facts.not_after = toTime(X509_get0_notAfter(cert));
  facts.common_name = internal::subjectEntry(cert, NID_commonName);
  facts.organization = internal::subjectEntry(cert, NID_organizationName);
  NamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_DNS) {
      const ASN1_IA5STRING* dns = name->d.dNSName;
      facts.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                   static_cast<std::size_t>(ASN1_STRING_length(dns)));
    }
  }
  BioPtr key_bio = readBio(key_pem);
  KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  facts.key_matches = key && X509_check_private_key(cert, key.get()) == 1;
  if (!ca_pem.empty()) {
    StorePtr store(X509_STORE_new());
    for (X509Ptr& ca : readCertificates(ca_pem)) {
      X509_STORE_add_cert(store.get(), ca.get());
    }
    StoreCtxPtr ctx(X509_STORE_CTX_new());
    facts.signed_by_ca = store && ctx &&
                         X509_STORE_CTX_init(ctx.get(), store.get(), cert, nullptr) == 1 &&
                         X509_verify_cert(ctx.get()) == 1;
  }
  return facts;
}

}  // namespace kvc::runtime
