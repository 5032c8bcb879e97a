#include "kvc/common/metrics.h"

#include <cmath>
#include <cstdio>

namespace kvc {
namespace {

std::string formatNumber(double value) {
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
    return buffer;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

std::string labelText(const MetricLabels& labels, const std::string& extraKey = {},
                      const std::string& extraValue = {}) {
  if (labels.empty() && extraKey.empty()) {
    return {};
  }
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : labels) {
    out += first ? "" : ",";
    out += key + "=\"" + escapeLabelValue(value) + "\"";
    first = false;
  }
  if (!extraKey.empty()) {
    out += first ? "" : ",";
    out += extraKey + "=\"" + extraValue + "\"";
  }
  return out + "}";
}

}  // namespace

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void MetricsRegistry::describe(std::string name, Type type, std::string help,
                               std::vector<double> buckets) {
  std::lock_guard lock(mutex_);
  Family& f = families_[std::move(name)];
  f.type = type;
  f.help = std::move(help);
  f.buckets = std::move(buckets);
}

MetricsRegistry::Family& MetricsRegistry::family(std::string_view name) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    it = families_.emplace(std::string(name), Family{}).first;
  }
  return it->second;
}

void MetricsRegistry::increment(std::string_view name, const MetricLabels& labels, double by) {
  std::lock_guard lock(mutex_);
  family(name).samples[labels] += by;
}

void MetricsRegistry::add(std::string_view name, const MetricLabels& labels, double delta) {
  std::lock_guard lock(mutex_);
  family(name).samples[labels] += delta;
}

void MetricsRegistry::set(std::string_view name, const MetricLabels& labels, double value) {
  std::lock_guard lock(mutex_);
  family(name).samples[labels] = value;
}

void MetricsRegistry::observe(std::string_view name, const MetricLabels& labels, double value) {
  std::lock_guard lock(mutex_);
  Family& f = family(name);
  Histogram& h = f.histograms[labels];
  if (h.counts.size() != f.buckets.size()) {
    h.counts.assign(f.buckets.size(), 0);
  }
  for (std::size_t i = 0; i < f.buckets.size(); ++i) {
    if (value <= f.buckets[i]) {
      h.counts[i] += 1;
      break;
    }
  }
  h.sum += value;
  h.count += 1;
}

double MetricsRegistry::value(std::string_view name, const MetricLabels& labels) const {
  std::lock_guard lock(mutex_);
  auto it = families_.find(name);
  if (it == families_.end()) {
    return 0;
  }
  auto sample = it->second.samples.find(labels);
  return sample == it->second.samples.end() ? 0 : sample->second;
}

std::string MetricsRegistry::exposition() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [name, f] : families_) {
    const char* type = f.type == Type::Counter ? "counter"
                       : f.type == Type::Gauge ? "gauge"
                                               : "histogram";
    out += "# HELP " + name + " " + f.help + "\n";
    out += "# TYPE " + name + " " + type + "\n";
    for (const auto& [labels, value] : f.samples) {
      out += name + labelText(labels) + " " + formatNumber(value) + "\n";
    }
    for (const auto& [labels, h] : f.histograms) {
      double cumulative = 0;
      for (std::size_t i = 0; i < f.buckets.size(); ++i) {
        cumulative += i < h.counts.size() ? h.counts[i] : 0;
        out += name + "_bucket" + labelText(labels, "le", formatNumber(f.buckets[i])) + " " +
               formatNumber(cumulative) + "\n";
      }
      out += name + "_bucket" + labelText(labels, "le", "+Inf") + " " + formatNumber(h.count) +
             "\n";
      out += name + "_sum" + labelText(labels) + " " + formatNumber(h.sum) + "\n";
      out += name + "_count" + labelText(labels) + " " + formatNumber(h.count) + "\n";
    }
  }
  return out;
}

}  // namespace kvc
