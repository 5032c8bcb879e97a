#pragma once
// A small Prometheus registry: counters, gauges and histograms with labels, rendered in the text
// exposition format (version 0.0.4) for the manager's /metrics endpoint.
//
// Families are created once (at wiring time) and hand out children by label values; children
// are stable references that are cheap to update from any thread. Collectors are callbacks that
// write values computed at scrape time (queue depth, informer object counts).

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kvc::runtime {

class Counter {
public:
  void inc(double v = 1.0);
  double value() const { return value_.load(std::memory_order_relaxed); }

private:
  std::atomic<double> value_{0.0};
};

class Gauge {
public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void inc(double v = 1.0);
  void dec(double v = 1.0) { inc(-v); }
  double value() const { return value_.load(std::memory_order_relaxed); }

private:
  std::atomic<double> value_{0.0};
};

class Histogram {
public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  // Cumulative counts per bound (+Inf last), sum and count, read consistently.
  struct Snapshot {
    std::vector<double> bounds;
    std::vector<std::uint64_t> cumulative;
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;

private:
  mutable std::mutex mutex_;
  std::vector<double> bounds_;
  std::vector<std::uint64_t> buckets_;
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

// Default buckets for durations in seconds (controller-runtime's reconcile_time_seconds).
std::vector<double> defaultDurationBuckets();

template <typename T>
class Family {
public:
  Family(std::string name, std::string help, std::vector<std::string> labels,
         std::function<std::unique_ptr<T>()> make)
      : name_(std::move(name)),
        help_(std::move(help)),
        labels_(std::move(labels)),
        make_(std::move(make)) {}

  // The child for these label values (in the order of the family's label names).
  T& with(const std::vector<std::string>& values) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto& slot = children_[values];
    if (!slot) {
      slot = make_();
    }
    return *slot;
  }
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& labels() const { return labels_; }
  // Calls `fn(label_values, child)` for every child, in label order.
  void forEach(const std::function<void(const std::vector<std::string>&, const T&)>& fn) const {
    std::lock_guard<std::mutex> guard(mutex_);
    for (const auto& [values, child] : children_) {
      fn(values, *child);
    }
  }

private:
  std::string name_;
  std::string help_;
  std::vector<std::string> labels_;
  std::function<std::unique_ptr<T>()> make_;
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

// Writes samples computed at scrape time. The text format wants one `# HELP`/`# TYPE` header
// per family with all its samples together, while several writers (one collector per
// controller, say) may each report into the same family: samples are therefore grouped under
// their family, and families come out in the order they were first named.
class MetricWriter {
public:
  // Selects the family the following samples belong to ("gauge", "counter", "histogram"); the
  // header is written once, by the first call for a name.
  void family(std::string_view name, std::string_view help, std::string_view type);
  void sample(std::string_view name, const std::vector<std::pair<std::string, std::string>>& labels,
              double value);
  std::string text() const;

private:
  std::vector<std::string> families_;  // header and samples, one entry per family
  std::map<std::string, std::size_t, std::less<>> index_;  // family name -> entry
  std::size_t current_ = 0;
};

class Registry {
public:
  // Families are created on first use and returned on later calls with the same name.
  CounterFamily& counter(const std::string& name, const std::string& help,
                         std::vector<std::string> labels = {});
  GaugeFamily& gauge(const std::string& name, const std::string& help,
                     std::vector<std::string> labels = {});
  HistogramFamily& histogram(const std::string& name, const std::string& help,
                             std::vector<std::string> labels = {},
                             std::vector<double> bounds = defaultDurationBuckets());
  // Adds a scrape-time collector; the returned id removes it.
  int addCollector(std::function<void(MetricWriter&)> collector);
  void removeCollector(int id);

  // The text exposition of everything registered.
  std::string render() const;

private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<CounterFamily>> counters_;
  std::map<std::string, std::unique_ptr<GaugeFamily>> gauges_;
  std::map<std::string, std::unique_ptr<HistogramFamily>> histograms_;
  std::map<int, std::function<void(MetricWriter&)>> collectors_;
  int next_collector_ = 1;
};

// Escapes a label value for the exposition format (backslash, quote, newline).
std::string escapeLabelValue(std::string_view value);

}  // namespace kvc::runtime
