#pragma once
// The operator's gauges of our objects (policy/observe/object_metrics.h) on the manager's
// /metrics: a collector that reads the backends, pools and Bindings caches at scrape time. Only
// the leading replica exports them, so that a sum over the operator's Pods counts each object
// once.

#include "kvc/common/status.h"
#include "kvc/controllers/setup.h"
#include "kvc/runtime/manager.h"

namespace kvc::controllers::internal {

Status addObjectMetrics(runtime::Manager& manager, const ControllerSetup& setup);

}  // namespace kvc::controllers::internal
