#include "kvc/controllers/backend_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "internal/managed_backend.h"
#include "internal/master_reader.h"
#include "kvc/api/backend.h"
#include "kvc/api/backend_conditions.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/time.h"
#include "kvc/policy/store/backend_status.h"
#include "kvc/runtime/finalizer.h"

namespace kvc::controllers {

BackendReconciler::BackendReconciler(BackendControllerConfig config)
    : config_(std::move(config)),
      status_(config_.client, kube::resources::kvCacheBackends(), config_.metrics,
              *config_.clock),
      managed_(std::make_unique<internal::ManagedBackend>(config_, status_)) {}

BackendReconciler::~BackendReconciler() = default;

Result<runtime::Action> BackendReconciler::reconcile(const runtime::Request& request,
                                                     std::stop_token stop) {
  runtime::ObjectPtr object = config_.backends->get(request.name);
  if (!object) {
    return runtime::Action::done();
  }
  KVC_ASSIGN_OR_RETURN(api::KVCacheBackend backend, api::backendFromJson(*object));
  // The pools in usedBy that are definitely gone (a live NotFound): their claims are dropped.
  kube::Api pools(config_.client, kube::resources::kvCachePools());
  std::set<std::string> gone;
  for (const api::ObjectReference& user : backend.status.used_by) {
    if (config_.pools->get(user.name)) {
      continue;
    }
    auto live = pools.getOptional(user.name, stop);
    if (live.ok() && !live->has_value()) {
      gone.insert(user.name);
    }
  }
  if (backend.spec.managed) {
    return managed_->reconcile(*object, backend, gone, stop);
  }
  return reconcileExternal(*object, backend, gone, stop);
}

Result<runtime::Action> BackendReconciler::reconcileExternal(const Json& object,
                                                             const api::KVCacheBackend& backend,
                                                             const std::set<std::string>& gone,
                                                             std::stop_token stop) {
  const std::string& name = backend.metadata.name;
  kube::Api backends(config_.client, kube::resources::kvCacheBackends());
  if (!backend.metadata.deleting &&
      !api::hasFinalizer(backend.metadata, api::backend::kFinalizer)) {
    KVC_RETURN_IF_ERROR(runtime::addFinalizer(backends, object, api::backend::kFinalizer, stop));
  }

  // The master, through the Admin endpoint of the spec.
  policy::BackendReading reading;
  reading.admin_address =
      api::endpointAddress(backend.spec.external_endpoints, api::kEndpointAdmin);
  if (!reading.admin_address.empty()) {
    auto client = config_.stores(reading.admin_address);
    if (client.ok()) {
      reading = internal::readBackend(**client);
    } else {
      reading.health = policy::BackendReading::Health::Unreadable;
      reading.health_error = client.status().message();
    }
  }

  const std::string now = kube::formatTime(config_.clock->wallNow());
  std::vector<std::string> consumers;
  auto written = status_.update(
      *config_.backends, name,
      [&](const Json& current) -> Result<Json> {
        KVC_ASSIGN_OR_RETURN(api::KVCacheBackend fresh, api::backendFromJson(current));
        const policy::BackendFacts facts = internal::backendConsumers(fresh, gone);
        consumers = facts.consumers;
        return api::backendStatusToJson(policy::externalBackendStatus(
            facts, reading, facts.backend.metadata.generation, now));
      },
      stop);
  if (!written.ok()) {
    return written.status();
  }
  if (backend.metadata.deleting && consumers.empty() &&
      api::hasFinalizer(backend.metadata, api::backend::kFinalizer)) {
    runtime::ObjectPtr latest = config_.backends->get(name);
    Status removed = runtime::removeFinalizer(backends, latest ? *latest : object,
                                              api::backend::kFinalizer, stop);
    if (!removed.ok() && removed.code() != StatusCode::NotFound) {
      return removed.withContext("releasing KVCacheBackend " + name);
    }
    spdlog::info("backend {}: released (no pool uses it)", name);
    return runtime::Action::done();
  }
  return runtime::Action::requeueAfter(config_.resync);
}

}  // namespace kvc::controllers
