// Any byte string given to the AdmissionReview decoder is either refused with a Status or
// decoded; decoding then encoding a response never crashes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kvc/webhook/admission.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto request = kvc::webhook::decodeAdmissionReview(body);
  if (request.ok()) {
    kvc::webhook::AdmissionResponse response =
        kvc::webhook::deny(request->uid, 403, "Forbidden", std::string(body.substr(0, 64)));
    (void)kvc::webhook::encodeAdmissionReview(response);
  }
  return 0;
}
