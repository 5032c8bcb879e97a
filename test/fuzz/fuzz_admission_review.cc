// Any byte string given to the AdmissionReview decoder is either refused with a Status or
// decoded; decoding then encoding a response — with an excerpt of the body, which text.h says
// is safe to put into JSON — never crashes. The bounded parser under it
// (common/json_parse.h) reads what nlohmann's own parser reads: the same value, or a refusal
// for the same text — except text nested past kMaxJsonDepth, which only it refuses.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kvc/common/json_parse.h"
#include "kvc/common/text.h"
#include "kvc/webhook/admission.h"

namespace {

// Inputs past this are only decoded: nlohmann's parser is quadratic in an object's width.
constexpr std::size_t kCompared = 64 * 1024;

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

void compareParsers(std::string_view text) {
  auto bounded = kvc::parseJson(text);
  const kvc::Json reference = kvc::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (bounded.ok()) {
    check(!reference.is_discarded() && *bounded == reference);
  } else if (bounded.status().message().find("kMaxJsonDepth") == std::string_view::npos) {
    check(reference.is_discarded());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  if (size <= kCompared) {
    compareParsers(body);
  }
  auto request = kvc::webhook::decodeAdmissionReview(body);
  if (request.ok()) {
    kvc::webhook::AdmissionResponse response =
        kvc::webhook::deny(request->uid, 403, "Forbidden", kvc::excerpt(body, 64));
    (void)kvc::webhook::encodeAdmissionReview(response);
  }
  return 0;
}
