// Any byte string given to the AdmissionReview decoder is either refused with a Status or
// decoded; decoding then encoding a response — with an excerpt of the body, which text.h says
// is safe to put into JSON — never crashes. The bounded parser under it
// (common/json_parse.h) reads what nlohmann's own parser reads: the same value, or a refusal
// for the same text — except text nested past kMaxJsonDepth, which it always refuses.
//
// nlohmann's parser is the reference, and it is slow where parseJson is not: an ordered object
// scans its keys on every insert, so one object of 20,000 keys (a seed, and most inputs mutated
// from it) cost it ~n²/2 key comparisons — most of this target's time, at ~200 executions a
// second. The reference therefore reads only texts whose shape (common/json_shape.h) it can
// afford; every text within kCompared bytes is still read by parseJson, and the decoder reads
// every input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kvc/common/json_parse.h"
#include "kvc/common/json_shape.h"
#include "kvc/common/text.h"
#include "kvc/webhook/admission.h"

namespace {

// Inputs past this are only decoded.
constexpr std::size_t kCompared = 64 * 1024;

// What the reference parser is given: nesting up to parseJson's own limit (deeper text
// parseJson refuses, whatever the reference says), and objects whose keys cost it at most
// ~1 M key bytes compared (json_shape.h's key work; an object of ~200 short keys), a few
// milliseconds with the sanitizers.
constexpr kvc::JsonShapeLimits kAffordable{kvc::kMaxJsonDepth, 0, std::size_t{1} << 20};

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

void compareParsers(std::string_view text) {
  auto bounded = kvc::parseJson(text);
  // Both parsers stop reading at a NUL byte (nlohmann's lexer takes it for the end of the
  // input): `1<NUL>[[[...` is the number 1 to both. The shape is measured on what they read.
  const std::string_view read = text.substr(0, text.find('\0'));
  if (auto refusal = kvc::checkJsonShape(read, kAffordable)) {
    // Too deep: parseJson must refuse (a text that is not JSON is refused anyway).
    check(refusal->limit != "json_depth" || !bounded.ok());
    return;
  }
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
