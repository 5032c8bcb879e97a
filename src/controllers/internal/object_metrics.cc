#include "internal/object_metrics.h"

#include "internal/informers.h"
#include "kvc/policy/observe/object_metrics.h"

namespace kvc::controllers::internal {
namespace {

std::vector<Json> objectsOf(const runtime::Cache& cache) {
  std::vector<Json> out;
  for (const runtime::ObjectPtr& object : cache.list()) {
    out.push_back(*object);
  }
  return out;
}

}  // namespace

Status addObjectMetrics(runtime::Manager& manager, const ControllerSetup& setup) {
  Informers informers(manager, setup);
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr backends, informers.backends());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr pools, informers.pools());
  KVC_ASSIGN_OR_RETURN(runtime::InformerPtr bindings, informers.bindings());
  runtime::Manager* leader = &manager;
  manager.metrics().addCollector([leader, backends, pools, bindings](runtime::MetricWriter& out) {
    if (!leader->isLeader()) {
      return;
    }
    for (const policy::MetricFamilySamples& family :
         policy::objectMetrics(objectsOf(backends->cache()), objectsOf(pools->cache()),
                               objectsOf(bindings->cache()))) {
      out.family(family.name, family.help, family.type);
      for (const policy::MetricSeries& series : family.series) {
        out.sample(family.name, series.labels, series.value);
      }
    }
  });
  return okStatus();
}

}  // namespace kvc::controllers::internal
