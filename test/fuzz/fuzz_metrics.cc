// The master's /metrics parser (store/metrics.h) on any text: a scrape is refused with a message
// naming the line, or read; a read scrape, written back as Prometheus text, reads back to the
// same samples and the same typed figures.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kvc/common/json.h"
#include "kvc/store/metrics.h"

namespace {

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

// A refusal's message ends up in a status condition: it must be printable as JSON (dump()
// throws on bytes that are not UTF-8).
void checkMessage(const std::string& message) {
  check(!message.empty());
  (void)kvc::Json(message).dump();
}

std::string render(const kvc::store::StoreMetrics& metrics) {
  std::string text;
  for (const kvc::store::MetricSample& sample : metrics.samples) {
    text += sample.name;
    if (!sample.labels.empty()) {
      text += '{';
      for (const auto& [name, value] : sample.labels) {
        text += name + "=\"";
        for (char c : value) {
          if (c == '\\' || c == '"') {
            text += '\\';
            text += c;
          } else if (c == '\n') {
            text += "\\n";
          } else {
            text += c;
          }
        }
        text += "\",";
      }
      text.back() = '}';
    }
    text += ' ' + std::to_string(sample.value) + '\n';
  }
  return text;
}

bool sameSamples(const kvc::store::StoreMetrics& a, const kvc::store::StoreMetrics& b) {
  if (a.samples.size() != b.samples.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.samples.size(); ++i) {
    const auto& x = a.samples[i];
    const auto& y = b.samples[i];
    if (x.name != y.name || x.labels != y.labels || x.value != y.value) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto metrics = kvc::store::parseMetrics(text);
  if (!metrics.ok()) {
    check(metrics.error().kind() == kvc::store::StoreErrorKind::MalformedBody);
    checkMessage(metrics.error().message());
    return 0;
  }
  for (const kvc::store::MetricSample& sample : metrics->samples) {
    check(!sample.name.empty() && sample.value >= 0);
  }
  for (const auto& [tenant, figures] : metrics->tenants) {
    check(!tenant.empty());
    (void)figures.occupancyBytes();
  }
  (void)metrics->ledgerGeneration();
  auto again = kvc::store::parseMetrics(render(*metrics));
  check(again.ok());
  check(sameSamples(*metrics, *again));
  check(again->segment_capacity_bytes == metrics->segment_capacity_bytes);
  check(again->tenants.size() == metrics->tenants.size());
  check(again->total_capacity_bytes == metrics->total_capacity_bytes);
  return 0;
}
