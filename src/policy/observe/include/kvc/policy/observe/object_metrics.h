#pragma once
// The operator's metrics of our objects (docs/observability.md, "The operator's metrics"): what
// each backend, pool and Binding reports in its status, as Prometheus gauges computed at scrape
// time from the caches. Absent is not zero: a figure the status does not carry has no sample.
//
//   kvcache_backend_capacity_bytes{backend}            status.capacity.total
//   kvcache_backend_used_bytes{backend}                status.capacity.used
//   kvcache_backend_segments_mounted{backend}          len(status.members), once MembersMounted
//                                                      has been reported
//   kvcache_pool_quota_total_bytes{pool,backend}       spec.quota.total
//   kvcache_pool_usage_bytes{pool,backend}             status.usage.total
//   kvcache_binding_ceiling_bytes{namespace,binding,pool,domain}    spec.quota.ceiling
//   kvcache_binding_requested_bytes{…}, _effective_bytes{…}, _usage_bytes{…}
//   kvcache_binding_hit_ratio{…}                       status.hitRate
//   kvcache_{backend,pool,binding}_phase{…,phase}      1 for the phase reported
//   kvcache_{backend,pool,binding}_condition{…,type,status,reason}   1 for each condition
// Pure.

#include <string>
#include <utility>
#include <vector>

#include "kvc/common/json.h"

namespace kvc::policy {

struct MetricSeries {
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

struct MetricFamilySamples {
  std::string name;
  std::string help;
  std::string type = "gauge";
  std::vector<MetricSeries> series;
};

// The families above for these objects (raw, as cached), in a fixed order; a family with no
// sample is still listed (its header tells a scraper the operator exports it).
std::vector<MetricFamilySamples> objectMetrics(const std::vector<Json>& backends,
                                               const std::vector<Json>& pools,
                                               const std::vector<Json>& bindings);

}  // namespace kvc::policy
