#include "kvc/store/metrics.h"

#include <algorithm>
#include <cstdint>
#include <set>

namespace kvc::store {

const std::string* MetricSample::label(std::string_view key) const {
  for (const auto& entry : labels) {
    if (entry.first == key) {
      return &entry.second;
    }
  }
  return nullptr;
}

std::optional<std::int64_t> TenantMetrics::occupancyBytes() const {
  return used_bytes ? used_bytes : charged_bytes;
}

std::optional<std::int64_t> StoreMetrics::value(std::string_view name) const {
  for (const MetricSample& sample : samples) {
    if (sample.name == name && sample.labels.empty()) {
      return sample.value;
    }
  }
  return std::nullopt;
}

LedgerGeneration StoreMetrics::ledgerGeneration() const {
  bool used = false;
  bool charged = false;
  for (const auto& [id, tenant] : tenants) {
    used = used || tenant.used_bytes || tenant.reserved_bytes || tenant.committed_count ||
           tenant.metadata_object_count;
    charged = charged || tenant.charged_bytes || tenant.admission_closed;
  }
  if (charged) {
    return LedgerGeneration::Charged;
  }
  return used ? LedgerGeneration::Used : LedgerGeneration::None;
}

bool StoreMetrics::hasTenantBlock() const {
  return !tenants.empty() || allocatable_capacity_bytes || requested_bytes_sum ||
         effective_bytes_sum;
}

namespace {

constexpr std::int64_t kMaxValue = INT64_MAX;

bool isBlank(char c) { return c == ' ' || c == '\t'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool isNameChar(char c) { return isNameStart(c) || isDigit(c); }

// Reads a run of digits as a value below 2^63; false on overflow.
bool parseDigits(std::string_view digits, std::int64_t* out) {
  std::int64_t value = 0;
  for (char c : digits) {
    const int d = c - '0';
    if (value > (kMaxValue - d) / 10) {
      return false;
    }
    value = value * 10 + d;
  }
  *out = value;
  return true;
}

class LineParser {
public:
  explicit LineParser(std::string_view line) : line_(line) {}

  // Parses the whole line into `sample`; on failure returns the reason.
  std::optional<std::string> parse(MetricSample* sample) {
    // Name.
    if (pos_ >= line_.size() || !isNameStart(line_[pos_])) {
      return "a sample must start with a metric name";
    }
    const std::size_t name_start = pos_;
    while (pos_ < line_.size() && isNameChar(line_[pos_])) {
      ++pos_;
    }
    sample->name = std::string(line_.substr(name_start, pos_ - name_start));
    // Labels.
    if (pos_ < line_.size() && line_[pos_] == '{') {
      ++pos_;
      if (auto error = parseLabels(sample)) {
        return error;
      }
    }
    // Value: separated by blanks, digits only.
    if (pos_ >= line_.size() || !isBlank(line_[pos_])) {
      return pos_ >= line_.size() ? "the sample has no value"
                                  : "unexpected character after the metric name";
    }
    skipBlanks();
    const std::size_t value_start = pos_;
    while (pos_ < line_.size() && !isBlank(line_[pos_])) {
      ++pos_;
    }
    const std::string_view value = line_.substr(value_start, pos_ - value_start);
    if (value.empty()) {
      return "the sample has no value";
    }
    if (!std::all_of(value.begin(), value.end(), isDigit)) {
      return "value \"" + std::string(value) +
             "\" is not a non-negative whole number (NaN, Inf, signs, fractions and exponents "
             "are refused)";
    }
    if (!parseDigits(value, &sample->value)) {
      return "value " + std::string(value) + " is past 2^63-1";
    }
    // Optional timestamp (milliseconds, may be negative), then nothing.
    skipBlanks();
    if (pos_ < line_.size()) {
      const std::size_t ts_start = pos_;
      if (line_[pos_] == '-') {
        ++pos_;
      }
      const std::size_t digits_start = pos_;
      while (pos_ < line_.size() && isDigit(line_[pos_])) {
        ++pos_;
      }
      std::int64_t ignored = 0;
      if (pos_ == digits_start ||
          !parseDigits(line_.substr(digits_start, pos_ - digits_start), &ignored)) {
        return "bad timestamp \"" + std::string(line_.substr(ts_start)) + "\"";
      }
      skipBlanks();
      if (pos_ < line_.size()) {
        return "unexpected text after the value";
      }
    }
    return std::nullopt;
  }

private:
  void skipBlanks() {
    while (pos_ < line_.size() && isBlank(line_[pos_])) {
      ++pos_;
    }
  }

  std::optional<std::string> parseLabels(MetricSample* sample) {
    std::set<std::string, std::less<>> seen;
    while (true) {
      skipBlanks();
      if (pos_ >= line_.size()) {
        return "unterminated label set";
      }
      if (line_[pos_] == '}') {
        ++pos_;
        return std::nullopt;
      }
      // Label name.
      if (!(isNameStart(line_[pos_]) && line_[pos_] != ':')) {
        return "bad label name";
      }
      const std::size_t start = pos_;
      while (pos_ < line_.size() && isNameChar(line_[pos_]) && line_[pos_] != ':') {
        ++pos_;
      }
      std::string name(line_.substr(start, pos_ - start));
      skipBlanks();
      if (pos_ >= line_.size() || line_[pos_] != '=') {
        return "label " + name + " has no '='";
      }
      ++pos_;
      skipBlanks();
      if (pos_ >= line_.size() || line_[pos_] != '"') {
        return "the value of label " + name + " is not quoted";
      }
      ++pos_;
      std::string value;
      bool closed = false;
      while (pos_ < line_.size()) {
        const char c = line_[pos_++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\') {
          if (pos_ >= line_.size()) {
            break;
          }
          const char e = line_[pos_++];
          if (e == '\\' || e == '"') {
            value.push_back(e);
          } else if (e == 'n') {
            value.push_back('\n');
          } else {
            return "label " + name + " has an unknown escape \\" + std::string(1, e);
          }
          continue;
        }
        value.push_back(c);
      }
      if (!closed) {
        return "the value of label " + name + " is not terminated";
      }
      if (!seen.insert(name).second) {
        return "label " + name + " appears twice";
      }
      sample->labels.emplace_back(std::move(name), std::move(value));
      skipBlanks();
      if (pos_ < line_.size() && line_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < line_.size() && line_[pos_] == '}') {
        continue;
      }
      return "expected ',' or '}' in the label set";
    }
  }

  std::string_view line_;
  std::size_t pos_ = 0;
};

// The unlabelled master-wide families and where they go.
using GlobalField = std::optional<std::int64_t> StoreMetrics::*;
constexpr std::pair<std::string_view, GlobalField> kGlobalFamilies[] = {
    {kMetricTotalCapacity, &StoreMetrics::total_capacity_bytes},
    {kMetricAllocated, &StoreMetrics::allocated_bytes},
    {kMetricTotalFileCapacity, &StoreMetrics::total_file_capacity_bytes},
    {kMetricAllocatedFile, &StoreMetrics::allocated_file_size_bytes},
    {kMetricKeyCount, &StoreMetrics::key_count},
    {kMetricActiveClients, &StoreMetrics::active_clients},
    {kMetricPutStartRequests, &StoreMetrics::put_start_requests_total},
    {kMetricPutEndRequests, &StoreMetrics::put_end_requests_total},
    {kMetricPutRevokeRequests, &StoreMetrics::put_revoke_requests_total},
    {kMetricBatchPutStartItems, &StoreMetrics::batch_put_start_items_total},
    {kMetricBatchPutEndItems, &StoreMetrics::batch_put_end_items_total},
    {kMetricBatchPutRevokeItems, &StoreMetrics::batch_put_revoke_items_total},
    {kMetricRemountRequests, &StoreMetrics::remount_segment_requests_total},
    {kMetricAllocatableCapacity, &StoreMetrics::allocatable_capacity_bytes},
    {kMetricRequestedSum, &StoreMetrics::requested_bytes_sum},
    {kMetricEffectiveSum, &StoreMetrics::effective_bytes_sum},
};

// The per-tenant families (label tenant_id required).
using TenantField = std::optional<std::int64_t> TenantMetrics::*;
constexpr std::pair<std::string_view, TenantField> kTenantFamilies[] = {
    {"mooncake_tenant_quota_requested_bytes", &TenantMetrics::requested_bytes},
    {"mooncake_tenant_quota_effective_bytes", &TenantMetrics::effective_bytes},
    {"mooncake_tenant_quota_over_quota", &TenantMetrics::over_quota},
    {"mooncake_tenant_quota_explicit_policy", &TenantMetrics::explicit_policy},
    {"mooncake_tenant_quota_used_bytes", &TenantMetrics::used_bytes},
    {"mooncake_tenant_quota_reserved_bytes", &TenantMetrics::reserved_bytes},
    {"mooncake_tenant_quota_committed_count", &TenantMetrics::committed_count},
    {"mooncake_tenant_quota_metadata_object_count", &TenantMetrics::metadata_object_count},
    {"mooncake_tenant_quota_charged_bytes", &TenantMetrics::charged_bytes},
    {"mooncake_tenant_quota_admission_closed", &TenantMetrics::admission_closed},
    {"mooncake_tenant_evict_bytes_total", &TenantMetrics::evict_bytes_total},
};
constexpr std::string_view kTenantRejectFamily = "mooncake_tenant_quota_reject_total";

// A series' identity: name plus its sorted labels.
std::string seriesKey(const MetricSample& sample) {
  auto labels = sample.labels;
  std::sort(labels.begin(), labels.end());
  std::string key = sample.name;
  for (const auto& [name, value] : labels) {
    key += '\0';
    key += name;
    key += '\0';
    key += value;
  }
  return key;
}

}  // namespace

StoreResult<StoreMetrics> parseMetrics(std::string_view text) {
  StoreMetrics metrics;
  std::set<std::string, std::less<>> series;
  bool any_content = false;
  std::size_t line_number = 0;
  std::size_t pos = 0;
  // The reason quotes the line's bytes: excerpt() keeps the message UTF-8 (it becomes a
  // condition).
  auto fail = [&line_number](std::string_view line, const std::string& reason) {
    return StoreError(StoreErrorKind::MalformedBody,
                      "/metrics: malformed body: line " + std::to_string(line_number) + ": " +
                          excerpt(reason, 240) + ": " + excerpt(line, 120),
                      200);
  };
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    std::size_t first = 0;
    while (first < line.size() && isBlank(line[first])) {
      ++first;
    }
    if (first == line.size()) {
      continue;
    }
    any_content = true;
    if (line[first] == '#') {
      continue;
    }
    MetricSample sample;
    if (auto error = LineParser(line.substr(first)).parse(&sample)) {
      return fail(line, *error);
    }
    if (!series.insert(seriesKey(sample)).second) {
      return fail(line, "the series appears twice");
    }

    // Typed figures.
    bool handled = false;
    for (const auto& [name, field] : kGlobalFamilies) {
      if (sample.name == name) {
        // A global family seen with labels is not the figure we know: skip it.
        if (sample.labels.empty()) {
          metrics.*field = sample.value;
        }
        handled = true;
        break;
      }
    }
    if (!handled &&
        (sample.name == kMetricSegmentCapacity || sample.name == kMetricSegmentAllocated)) {
      const std::string* segment = sample.label("segment");
      if (segment == nullptr) {
        return fail(line, "a per-segment series without a \"segment\" label");
      }
      auto& target = sample.name == kMetricSegmentCapacity ? metrics.segment_capacity_bytes
                                                           : metrics.segment_allocated_bytes;
      target[*segment] = sample.value;
      handled = true;
    }
    if (!handled) {
      const bool reject = sample.name == kTenantRejectFamily;
      TenantField tenant_field = nullptr;
      for (const auto& [name, field] : kTenantFamilies) {
        if (sample.name == name) {
          tenant_field = field;
          break;
        }
      }
      if (reject || tenant_field != nullptr) {
        const std::string* tenant = sample.label("tenant_id");
        if (tenant == nullptr || tenant->empty()) {
          return fail(line, "a tenant series without a non-empty \"tenant_id\" label");
        }
        TenantMetrics& figures = metrics.tenants[*tenant];
        if (reject) {
          const std::string* reason = sample.label("reason");
          figures.reject_total[reason != nullptr ? *reason : std::string()] = sample.value;
        } else {
          figures.*tenant_field = sample.value;
        }
      }
    }
    metrics.samples.push_back(std::move(sample));
  }
  if (any_content && metrics.samples.empty()) {
    return StoreError(StoreErrorKind::MalformedBody,
                      "/metrics: malformed body: no sample in a non-empty body", 200);
  }
  return metrics;
}

}  // namespace kvc::store
