#include "kvc/policy/observe/object_metrics.h"

#include <cstdlib>
#include <map>
#include <optional>

#include "kvc/common/quantity.h"
#include "kvc/policy/observe/cluster_state.h"

namespace kvc::policy {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

std::optional<double> bytesAt(const Json& object, std::initializer_list<const char*> path) {
  const std::string text = stringAt(object, path);
  if (text.empty()) {
    return std::nullopt;
  }
  auto bytes = parseQuantityBytes(text);
  return bytes.ok() ? std::optional<double>(double(*bytes)) : std::nullopt;
}

// The families in the order they are written, filled by name.
class Families {
public:
  void declare(std::string name, std::string help) {
    index_[name] = out_.size();
    out_.push_back({std::move(name), std::move(help), "gauge", {}});
  }
  void add(const std::string& name, Labels labels, std::optional<double> value) {
    if (value) {
      out_[index_.at(name)].series.push_back({std::move(labels), *value});
    }
  }
  std::vector<MetricFamilySamples> take() { return std::move(out_); }

private:
  std::vector<MetricFamilySamples> out_;
  std::map<std::string, std::size_t> index_;
};

Labels with(Labels labels, std::initializer_list<std::pair<std::string, std::string>> more) {
  labels.insert(labels.end(), more.begin(), more.end());
  return labels;
}

// kvcache_<kind>_phase and kvcache_<kind>_condition of one object.
void lifecycle(Families& f, const std::string& kind, const Json& object, const Labels& labels) {
  const std::string phase = stringAt(object, {"status", "phase"});
  if (!phase.empty()) {
    f.add("kvcache_" + kind + "_phase", with(labels, {{"phase", phase}}), 1);
  }
  for (const ConditionView& c : conditionsOf(object)) {
    f.add("kvcache_" + kind + "_condition",
          with(labels, {{"type", c.type}, {"status", c.status}, {"reason", c.reason}}), 1);
  }
}

void declareAll(Families& f) {
  f.declare("kvcache_backend_capacity_bytes",
            "Bytes of segment capacity the store's master reports (status.capacity.total).");
  f.declare("kvcache_backend_used_bytes",
            "Bytes the master reports allocated (status.capacity.used).");
  f.declare("kvcache_backend_segments_mounted",
            "Segments the members have mounted on the master (status.members).");
  f.declare("kvcache_pool_quota_total_bytes", "The pool's spec.quota.total, in bytes.");
  f.declare("kvcache_pool_usage_bytes",
            "Bytes the pool's reuse domains hold (status.usage.total).");
  f.declare("kvcache_binding_ceiling_bytes", "The Binding's spec.quota.ceiling, in bytes.");
  f.declare("kvcache_binding_requested_bytes",
            "The ceiling the master's tenant ledger holds for the domain (status.requestedQuota).");
  f.declare("kvcache_binding_effective_bytes",
            "The grant the master computed for the domain (status.effectiveQuota).");
  f.declare("kvcache_binding_usage_bytes", "Bytes the domain holds in the store (status.usage).");
  f.declare("kvcache_binding_hit_ratio",
            "Share of looked-up tokens the store served, from the engines' own counters "
            "(status.hitRate).");
  for (const char* kind : {"backend", "pool", "binding"}) {
    f.declare(std::string("kvcache_") + kind + "_phase",
              std::string("1 for the ") + kind + "'s reported phase.");
    f.declare(std::string("kvcache_") + kind + "_condition",
              std::string("1 for each condition the ") + kind + " reports.");
  }
}

}  // namespace

std::vector<MetricFamilySamples> objectMetrics(const std::vector<Json>& backends,
                                               const std::vector<Json>& pools,
                                               const std::vector<Json>& bindings) {
  Families f;
  declareAll(f);
  for (const Json& backend : backends) {
    const Labels labels = {{"backend", stringAt(backend, {"metadata", "name"})}};
    f.add("kvcache_backend_capacity_bytes", labels,
          bytesAt(backend, {"status", "capacity", "total"}));
    f.add("kvcache_backend_used_bytes", labels, bytesAt(backend, {"status", "capacity", "used"}));
    if (conditionOf(backend, "MembersMounted")) {
      const Json members = backend.value(Json::json_pointer("/status/members"), Json::array());
      f.add("kvcache_backend_segments_mounted", labels,
            members.is_array() ? double(members.size()) : 0.0);
    }
    lifecycle(f, "backend", backend, labels);
  }
  std::map<std::string, std::string> backend_of_pool;
  for (const Json& pool : pools) {
    const std::string name = stringAt(pool, {"metadata", "name"});
    const Json backends_named = pool.value(Json::json_pointer("/spec/backends"), Json::array());
    const std::string backend =
        backends_named.is_array() && !backends_named.empty() && backends_named.front().is_string()
            ? backends_named.front().get<std::string>()
            : std::string();
    backend_of_pool[name] = backend;
    const Labels labels = {{"pool", name}, {"backend", backend}};
    f.add("kvcache_pool_quota_total_bytes", labels, bytesAt(pool, {"spec", "quota", "total"}));
    f.add("kvcache_pool_usage_bytes", labels, bytesAt(pool, {"status", "usage", "total"}));
    lifecycle(f, "pool", pool, labels);
  }
  for (const Json& binding : bindings) {
    const Labels labels = {{"namespace", stringAt(binding, {"metadata", "namespace"})},
                           {"binding", stringAt(binding, {"metadata", "name"})},
                           {"pool", stringAt(binding, {"spec", "poolRef", "name"})},
                           {"domain", stringAt(binding, {"spec", "domain", "name"})}};
    f.add("kvcache_binding_ceiling_bytes", labels, bytesAt(binding, {"spec", "quota", "ceiling"}));
    f.add("kvcache_binding_requested_bytes", labels,
          bytesAt(binding, {"status", "requestedQuota"}));
    f.add("kvcache_binding_effective_bytes", labels,
          bytesAt(binding, {"status", "effectiveQuota"}));
    f.add("kvcache_binding_usage_bytes", labels, bytesAt(binding, {"status", "usage"}));
    const std::string hit_rate = stringAt(binding, {"status", "hitRate"});
    if (!hit_rate.empty()) {
      f.add("kvcache_binding_hit_ratio", labels, std::strtod(hit_rate.c_str(), nullptr));
    }
    lifecycle(f, "binding", binding, labels);
  }
  return f.take();
}

}  // namespace kvc::policy
