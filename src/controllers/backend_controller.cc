#include "kvc/controllers/backend_controller.h"

#include "internal/backend_teardown.h"
#include "internal/external_backend.h"
#include "internal/managed_backend.h"
#include "kvc/api/backend.h"
#include "kvc/kube/resource.h"
#include "kvc/policy/store/backend_plan.h"

namespace kvc::controllers {

BackendReconciler::BackendReconciler(BackendControllerConfig config)
    : config_(std::move(config)),
      status_(config_.client, kube::resources::kvCacheBackends(), config_.metrics, *config_.clock),
      pools_(config_.client, kube::resources::kvCachePools(), config_.pools),
      external_(std::make_unique<internal::ExternalBackend>(config_, status_)),
      managed_(std::make_unique<internal::ManagedBackend>(config_, status_)),
      teardown_(std::make_unique<internal::BackendTeardown>(config_, status_)) {}

BackendReconciler::~BackendReconciler() = default;

Result<runtime::Action> BackendReconciler::reconcile(const runtime::Request& request,
                                                     std::stop_token stop) {
  runtime::ObjectPtr object = config_.backends->get(request.name);
  if (!object) {
    return runtime::Action::done();
  }
  KVC_ASSIGN_OR_RETURN(api::KVCacheBackend backend, api::backendFromJson(*object));
  const std::set<std::string> gone = gonePools(backend, stop);
  if (!backend.spec.managed) {
    return external_->reconcile(*object, backend, gone, stop);
  }
  if (policy::tearingDown(backend, gone)) {
    return teardown_->reconcile(*object, backend, gone, stop);
  }
  return managed_->reconcile(*object, backend, gone, stop);
}

std::set<std::string> BackendReconciler::gonePools(const api::KVCacheBackend& backend,
                                                   std::stop_token stop) const {
  std::set<std::string> gone;
  for (const api::ObjectReference& user : backend.status.used_by) {
    auto pool = pools_.get("", user.name, stop);
    if (pool.ok() && !pool->has_value()) {
      gone.insert(user.name);
    }
  }
  return gone;
}

}  // namespace kvc::controllers
