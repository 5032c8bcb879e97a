#include "internal/external_backend.h"

#include <spdlog/spdlog.h>

#include "internal/master_reader.h"
#include "internal/store_objects.h"
#include "kvc/api/backend_conditions.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/runtime/finalizer.h"

namespace kvc::controllers::internal {

Result<runtime::Action> ExternalBackend::reconcile(const Json& object,
                                                   const api::KVCacheBackend& backend,
                                                   const std::set<std::string>& gone,
                                                   std::stop_token stop) {
  policy::ExternalBackendObservation seen = observe(backend, gone);
  // At most two plans: the one that writes the status, and the one that follows from it.
  for (;;) {
    const policy::ExternalBackendPlan plan = policy::planExternalBackend(seen);
    KVC_ASSIGN_OR_RETURN(std::optional<runtime::Action> outcome, act(object, plan, seen, stop));
    if (outcome) {
      return *outcome;
    }
  }
}

policy::ExternalBackendObservation ExternalBackend::observe(
    const api::KVCacheBackend& backend, const std::set<std::string>& gone) const {
  policy::ExternalBackendObservation seen;
  seen.now = kube::formatTime(config_.clock->wallNow());
  seen.backend = backend;
  seen.gone = gone;
  // The master, through the Admin endpoint of the spec.
  seen.reading.admin_address =
      api::endpointAddress(backend.spec.external_endpoints, api::kEndpointAdmin);
  if (!seen.reading.admin_address.empty()) {
    const StoreTarget target = storeTarget(backend, seen.reading.admin_address, "");
    auto client = config_.stores(target);
    if (client.ok()) {
      seen.reading = readBackend(**client);
    } else {
      seen.reading.health = policy::BackendReading::Health::Unreadable;
      seen.reading.health_error = client.status().message();
    }
    seen.reading.admin_tls = !target.tls_secret.empty();
  }
  return seen;
}

Result<std::optional<runtime::Action>> ExternalBackend::act(
    const Json& object, const policy::ExternalBackendPlan& plan,
    policy::ExternalBackendObservation& seen, std::stop_token stop) {
  const std::string& name = seen.backend.metadata.name;
  const kube::Api backends(config_.client, kube::resources::kvCacheBackends());
  if (plan.add_finalizer) {
    KVC_RETURN_IF_ERROR(runtime::addFinalizer(backends, object, api::backend::kFinalizer, stop));
  }
  if (plan.status) {
    KVC_RETURN_IF_ERROR(writeStatus(plan, seen, stop));
    return std::optional<runtime::Action>();
  }
  if (plan.release) {
    runtime::ObjectPtr latest = config_.backends->get(name);
    Status removed = runtime::removeFinalizer(backends, latest ? *latest : object,
                                              api::backend::kFinalizer, stop);
    if (!removed.ok() && removed.code() != StatusCode::NotFound) {
      return removed.withContext("releasing KVCacheBackend " + name);
    }
    spdlog::info("backend {}: released (no pool uses it)", name);
  }
  return std::optional<runtime::Action>(actionFor(plan.next, config_));
}

// The status, from the backend as the write finds it; the pools it names are recorded for the
// plan that follows (none when the backend went meanwhile).
Status ExternalBackend::writeStatus(const policy::ExternalBackendPlan& plan,
                                    policy::ExternalBackendObservation& seen,
                                    std::stop_token stop) {
  std::vector<std::string> consumers;
  auto written = status_.update(
      *config_.backends, seen.backend.metadata.name,
      [&](const Json& current) -> Result<Json> {
        if (kube::object::resourceVersion(current) == seen.backend.metadata.resource_version) {
          consumers = plan.status->facts.consumers;
          return api::backendStatusToJson(plan.status->status);
        }
        KVC_ASSIGN_OR_RETURN(api::KVCacheBackend fresh, api::backendFromJson(current));
        policy::BackendStatusPlan moved = policy::externalStatusFor(seen, fresh);
        consumers = std::move(moved.facts.consumers);
        return api::backendStatusToJson(moved.status);
      },
      stop);
  if (!written.ok()) {
    return written.status();
  }
  seen.written_consumers = std::move(consumers);
  return okStatus();
}

}  // namespace kvc::controllers::internal
