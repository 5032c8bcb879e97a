// The injection core on arbitrary JSON Pods: it decides without crashing, a refusal carries a
// message, and an injected Pod is an object that contains the record.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "kvc/api/kvcache.h"
#include "kvc/common/json_parse.h"
#include "kvc/policy/inject/inject.h"

namespace {

const kvc::policy::ClusterSnapshot& cluster() {
  static const kvc::policy::ClusterSnapshot snapshot = [] {
    using kvc::Json;
    kvc::policy::ClusterSnapshot s;
    s.add(*kvc::api::backendFromJson(Json::parse(R"({"metadata": {"name": "b"}, "spec":
      {"connection": {"managed": {"leader": {}, "members": [{"medium": "DRAM"},
      {"medium": "DRAM", "transport": {"protocol": "CANN"}}]}}}})")));
    s.add(*kvc::api::poolFromJson(Json::parse(R"({"metadata": {"name": "p"}, "spec":
      {"backends": ["b"]}, "status": {"clientEndpoint": "b:50051", "conditions": [{"type":
      "QuotaLedgerAvailable", "status": "True"}]}})")));
    s.add(*kvc::api::bindingFromJson(Json::parse(R"({"metadata": {"name": "bind", "namespace":
      "ns"}, "spec": {"poolRef": {"name": "p"}, "domain": {"dtype": "bfloat16"}}})")));
    return s;
  }();
  return snapshot;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Parsed as the webhook's decoder parses the review around it (bounded depth,
  // common/json_parse.h).
  auto parsed = kvc::parseJson(text);
  if (!parsed.ok()) {
    return 0;
  }
  kvc::Json pod = std::move(parsed).value();
  const kvc::Json before = pod;
  const kvc::policy::Decision decision = kvc::policy::inject(pod, "ns", cluster(), {});
  if (pod != before) {
    std::abort();  // the input must never be modified
  }
  if (decision.verdict == kvc::policy::Verdict::Refused && decision.refusal->message.empty()) {
    std::abort();
  }
  if (decision.verdict == kvc::policy::Verdict::Injected &&
      !decision.object.contains(
          kvc::Json::json_pointer("/metadata/annotations/kvcache.gpustack.ai~1injected"))) {
    std::abort();
  }
  return 0;
}
