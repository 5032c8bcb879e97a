#pragma once
// What is read back from one X.509 certificate (runtime/certificates.h reads it; the policies
// that decide on renewals, policy/admission/webhook_certificate.h and
// policy/store/store_credentials.h, take it as a plain value).

#include <chrono>
#include <string>
#include <vector>

namespace kvc {

using SystemTime = std::chrono::system_clock::time_point;

struct CertificateFacts {
  SystemTime not_before;
  SystemTime not_after;
  std::string common_name;             // of the subject
  std::string organization;            // of the subject, the first one
  std::vector<std::string> dns_names;  // subjectAltName DNS entries, in order
  bool signed_by_ca = false;           // verifies against the given CA bundle
  bool key_matches = false;            // the given private key belongs to it
};

}  // namespace kvc
