#pragma once
// A small Prometheus registry: counters, gauges and histograms with labels, rendered in the text
// exposition format (version 0.0.4). Shared by the webhook server and the operator's /metrics.
//
// Families are declared once with their type and help; samples are addressed by label values.
// Thread-safe; one mutex is plenty at the rates an admission webhook sees.

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvc {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class MetricsRegistry {
public:
  enum class Type { Counter, Gauge, Histogram };

  void describe(std::string name, Type type, std::string help,
                std::vector<double> buckets = {});

  void increment(std::string_view name, const MetricLabels& labels = {}, double by = 1);
  void add(std::string_view name, const MetricLabels& labels, double delta);  // gauges
  void set(std::string_view name, const MetricLabels& labels, double value);  // gauges
  void observe(std::string_view name, const MetricLabels& labels, double value);  // histograms

  // The value of a counter or gauge sample (0 when absent), for tests.
  double value(std::string_view name, const MetricLabels& labels = {}) const;

  std::string exposition() const;

private:
  struct Histogram {
    std::vector<double> counts;  // per bucket, not cumulative
    double sum = 0;
    double count = 0;
  };
  struct Family {
    Type type = Type::Counter;
    std::string help;
    std::vector<double> buckets;
    std::map<MetricLabels, double> samples;
    std::map<MetricLabels, Histogram> histograms;
  };

  Family& family(std::string_view name);

  mutable std::mutex mutex_;
  std::map<std::string, Family, std::less<>> families_;
};

// Escapes a label value for the exposition format.
std::string escapeLabelValue(std::string_view value);

}  // namespace kvc
