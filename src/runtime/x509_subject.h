#pragma once
// Reads one entry of a certificate's subject (OpenSSL), for the certificate facts and for the
// identity of a mutual-TLS peer.

#include <openssl/x509.h>

#include <string>

namespace kvc::runtime::internal {

// The first subject entry of `nid` (NID_commonName, NID_organizationName), or "".
inline std::string subjectEntry(X509* cert, int nid) {
  X509_NAME* subject = X509_get_subject_name(cert);
  const int at = X509_NAME_get_index_by_NID(subject, nid, -1);
  if (at < 0) {
    return {};
  }
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at));
  return {reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
          static_cast<std::size_t>(ASN1_STRING_length(data))};
}

}  // namespace kvc::runtime::internal
