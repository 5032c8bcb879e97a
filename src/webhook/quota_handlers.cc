#include "kvc/webhook/quota_handlers.h"

#include <optional>
#include <set>

#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/indexes.h"
#include "kvc/api/pool.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/policy/admission/quota_admission.h"
#include "kvc/webhook/validation.h"

namespace kvc::webhook {

QuotaAdmission::QuotaAdmission(kube::ClientPtr client, QuotaCaches caches, SettingsSource settings,
                               std::chrono::milliseconds live_timeout)
    : client_(std::move(client)),
      caches_(caches),
      settings_(std::move(settings)),
      live_timeout_(live_timeout),
      pool_reader_(client_, kube::resources::kvCachePools(), caches_.pools, live_timeout_),
      backend_reader_(client_, kube::resources::kvCacheBackends(), caches_.backends,
                      live_timeout_) {}

AdmissionResponse QuotaAdmission::admitPool(const AdmissionRequest& request) const {
  if (request.operation != "CREATE" && request.operation != "UPDATE") {
    return allow(request.uid);
  }
  auto pool = api::poolFromJson(request.object);
  if (!pool.ok()) {
    return deny(request.uid, 400, "BadRequest", "KVCachePool: " + pool.status().message());
  }
  policy::PoolAdmission admission;
  admission.operation = operationOf(request);
  admission.pool = *pool;
  if (admission.operation == policy::AdmissionOperation::Update) {
    auto old = api::poolFromJson(request.old_object);
    if (old.ok()) {
      admission.old = std::move(old).value();
    }
  } else if (pool->spec.backends.size() == 1 && !pool->spec.backends.front().empty()) {
    const std::string& name = pool->spec.backends.front();
    auto backend = backend_reader_.getAs("", name, &api::backendFromJson);
    if (!backend.ok()) {
      return readFailure(request.uid, backend.status(), "reading KVCacheBackend \"" + name + "\"");
    }
    admission.backend = std::move(backend).value();
  }
  return verdictResponse(request.uid, api::kKindPool, pool->metadata.name,
                         policy::admitPool(admission));
}

AdmissionResponse QuotaAdmission::admitBinding(const AdmissionRequest& request) const {
  if (request.operation != "CREATE" && request.operation != "UPDATE") {
    return allow(request.uid);
  }
  Json object = request.object;
  if (object.is_object() && object.contains("metadata") && object["metadata"].is_object() &&
      !object["metadata"].contains("namespace")) {
    object["metadata"]["namespace"] = request.namespace_name;
  }
  auto binding = api::bindingFromJson(object);
  if (!binding.ok()) {
    return deny(request.uid, 400, "BadRequest",
                "KVCachePoolBinding: " + binding.status().message());
  }
  policy::BindingAdmission admission;
  admission.operation = operationOf(request);
  admission.binding = *binding;
  admission.dtype_owned = settings_ ? settings_().kv_cache_dtype_owned : true;
  if (admission.operation == policy::AdmissionOperation::Update) {
    auto old = api::bindingFromJson(request.old_object);
    if (old.ok()) {
      admission.old = std::move(old).value();
    }
  }
  const bool create = admission.operation == policy::AdmissionOperation::Create || !admission.old;
  const bool ceiling_moved =
      create || admission.old->spec.quota_ceiling != binding->spec.quota_ceiling;
  if (!ceiling_moved || binding->spec.pool_ref.empty()) {
    return verdictResponse(request.uid, api::kKindBinding, binding->metadata.name,
                           policy::admitBinding(admission));
  }

  // The pool (for the ceiling) and, on CREATE, the master it draws on.
  const std::string& pool_name = binding->spec.pool_ref;
  auto pool = pool_reader_.getAs("", pool_name, &api::poolFromJson);
  if (!pool.ok()) {
    return readFailure(request.uid, pool.status(), "reading KVCachePool \"" + pool_name + "\"");
  }
  admission.pool_looked_up = true;
  admission.pool = std::move(pool).value();
  if (create && admission.pool && admission.pool->spec.backends.size() == 1) {
    admission.backend = admission.pool->spec.backends.front();
    auto backend = backend_reader_.getAs("", admission.backend, &api::backendFromJson);
    if (!backend.ok()) {
      return readFailure(request.uid, backend.status(),
                         "reading KVCacheBackend \"" + admission.backend + "\"");
    }
    admission.ledger = policy::ledgerKnowledge(*admission.pool, *backend);
    // Every Binding of every pool on that backend: the master's registered domains.
    std::vector<Json> pools_on_master;
    std::vector<Json> bindings_on_master;
    if (caches_.pools != nullptr && caches_.bindings != nullptr) {
      for (const runtime::ObjectPtr& p :
           caches_.pools->byIndex(api::kPoolsByBackend, admission.backend)) {
        for (const runtime::ObjectPtr& b :
             caches_.bindings->byIndex(api::kBindingsByPool, kube::object::name(*p))) {
          bindings_on_master.push_back(*b);
        }
      }
    } else {
      kube::Api pools_api =
          kube::Api(client_, kube::resources::kvCachePools()).withTimeout(live_timeout_);
      auto pools = pools_api.listAll();
      kube::Api bindings_api =
          kube::Api(client_, kube::resources::kvCachePoolBindings()).withTimeout(live_timeout_);
      auto bindings = bindings_api.listAll();
      if (!pools.ok() || !bindings.ok()) {
        return readFailure(request.uid, pools.ok() ? bindings.status() : pools.status(),
                           "listing the Bindings on KVCacheBackend \"" + admission.backend + "\"");
      }
      std::set<std::string> on_master;
      for (const Json& p : pools->items) {
        const auto backends = api::poolBackends(p);
        if (backends.size() == 1 && backends.front() == admission.backend) {
          on_master.insert(kube::object::name(p));
        }
      }
      for (const Json& b : bindings->items) {
        const auto names = api::bindingPool(b);
        if (!names.empty() && on_master.count(names.front()) > 0) {
          bindings_on_master.push_back(b);
        }
      }
    }
    for (const Json& b : bindings_on_master) {
      admission.siblings.push_back(
          {kube::object::namespaceName(b), kube::object::name(b), api::bindingDomain(b).front()});
    }
  }
  return verdictResponse(request.uid, api::kKindBinding, binding->metadata.name,
                         policy::admitBinding(admission));
}

}  // namespace kvc::webhook
