#include "kvc/runtime/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvc::runtime {
namespace {

void addAtomic(std::atomic<double>& target, double v) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + v, std::memory_order_relaxed)) {
  }
}

std::string formatValue(double v) {
  if (std::isinf(v)) {
    return v > 0 ? "+Inf" : "-Inf";
  }
  if (std::isnan(v)) {
    return "NaN";
  }
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string labelText(const std::vector<std::pair<std::string, std::string>>& labels) {
  if (labels.empty()) {
    return {};
  }
  std::string out = "{";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) {
      out += ",";
    }
    out += labels[i].first + "=\"" + escapeLabelValue(labels[i].second) + "\"";
  }
  out += "}";
  return out;
}

std::vector<std::pair<std::string, std::string>> zipLabels(const std::vector<std::string>& names,
                                                           const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    out.emplace_back(names[i], values[i]);
  }
  return out;
}

}  // namespace

void Counter::inc(double v) { addAtomic(value_, v); }
void Gauge::inc(double v) { addAtomic(value_, v); }

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(bounds_.size() + 1, 0) {
  std::sort(bounds_.begin(), bounds_.end());
}

void Histogram::observe(double v) {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);
  ++buckets_[static_cast<std::size_t>(it - bounds_.begin())];
  sum_ += v;
  ++count_;
}

Histogram::Snapshot Histogram::snapshot() const {
  std::lock_guard<std::mutex> guard(mutex_);
  Snapshot s;
  s.bounds = bounds_;
  std::uint64_t running = 0;
  for (const std::uint64_t b : buckets_) {
    running += b;
    s.cumulative.push_back(running);
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

std::vector<double> defaultDurationBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  for (const char c : value) {
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

void MetricWriter::family(std::string_view name, std::string_view help, std::string_view type) {
  if (auto it = index_.find(name); it != index_.end()) {
    current_ = it->second;
    return;
  }
  current_ = families_.size();
  index_.emplace(std::string(name), current_);
  std::string& out = families_.emplace_back();
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void MetricWriter::sample(std::string_view name,
                          const std::vector<std::pair<std::string, std::string>>& labels,
                          double value) {
  if (families_.empty()) {
    families_.emplace_back();  // samples before any family(): kept, without a header
  }
  std::string& out = families_[current_];
  out += name;
  out += labelText(labels);
  out += ' ';
  out += formatValue(value);
  out += '\n';
}

std::string MetricWriter::text() const {
  std::string out;
  for (const std::string& family : families_) {
    out += family;
  }
  return out;
}

CounterFamily& Registry::counter(const std::string& name, const std::string& help,
                                 std::vector<std::string> labels) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto& slot = counters_[name];
  if (!slot) {
    slot = std::make_unique<CounterFamily>(name, help, std::move(labels),
                                           [] { return std::make_unique<Counter>(); });
  }
  return *slot;
}

GaugeFamily& Registry::gauge(const std::string& name, const std::string& help,
                             std::vector<std::string> labels) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto& slot = gauges_[name];
  if (!slot) {
    slot = std::make_unique<GaugeFamily>(name, help, std::move(labels),
                                         [] { return std::make_unique<Gauge>(); });
  }
  return *slot;
}

HistogramFamily& Registry::histogram(const std::string& name, const std::string& help,
                                     std::vector<std::string> labels, std::vector<double> bounds) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto& slot = histograms_[name];
  if (!slot) {
    slot = std::make_unique<HistogramFamily>(
        name, help, std::move(labels),
        [bounds = std::move(bounds)] { return std::make_unique<Histogram>(bounds); });
  }
  return *slot;
}

int Registry::addCollector(std::function<void(MetricWriter&)> collector) {
  std::lock_guard<std::mutex> guard(mutex_);
  const int id = next_collector_++;
  collectors_[id] = std::move(collector);
  return id;
}

void Registry::removeCollector(int id) {
  std::lock_guard<std::mutex> guard(mutex_);
  collectors_.erase(id);
}

std::string Registry::render() const {
  std::lock_guard<std::mutex> guard(mutex_);
  MetricWriter w;
  // Plain entries, not structured bindings: the lambdas below capture them (clang before 16
  // cannot capture a structured binding, and the sanitized build uses clang).
  for (const auto& entry : counters_) {
    const std::string& name = entry.first;
    const auto& family = entry.second;
    w.family(name, family->help(), "counter");
    family->forEach([&](const std::vector<std::string>& values, const Counter& c) {
      w.sample(name, zipLabels(family->labels(), values), c.value());
    });
  }
  for (const auto& entry : gauges_) {
    const std::string& name = entry.first;
    const auto& family = entry.second;
    w.family(name, family->help(), "gauge");
    family->forEach([&](const std::vector<std::string>& values, const Gauge& g) {
      w.sample(name, zipLabels(family->labels(), values), g.value());
    });
  }
  for (const auto& entry : histograms_) {
    const std::string& name = entry.first;
    const auto& family = entry.second;
    w.family(name, family->help(), "histogram");
    family->forEach([&](const std::vector<std::string>& values, const Histogram& h) {
      const Histogram::Snapshot s = h.snapshot();
      auto labels = zipLabels(family->labels(), values);
      for (std::size_t i = 0; i <= s.bounds.size(); ++i) {
        auto with_le = labels;
        with_le.emplace_back("le", i < s.bounds.size() ? formatValue(s.bounds[i]) : "+Inf");
        w.sample(name + "_bucket", with_le, static_cast<double>(s.cumulative[i]));
      }
      w.sample(name + "_sum", labels, s.sum);
      w.sample(name + "_count", labels, static_cast<double>(s.count));
    });
  }
  for (const auto& [id, collector] : collectors_) {
    collector(w);
  }
  return w.text();
}

}  // namespace kvc::runtime
