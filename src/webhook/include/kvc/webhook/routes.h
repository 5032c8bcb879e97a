#pragma once
// The webhook server's routes: the Pod admission endpoints (mutate, freeze), the validation of
// KVCachePool, KVCachePoolBinding, KVCacheBackend and ModelDeployment, /healthz, /readyz and
// /metrics.
//
// Each admission route does transport only — POST, application/json, a decodable
// AdmissionReview (400/405/415 otherwise) — then hands the request to its handler, echoes the
// uid, and records latency and in-flight requests.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "kvc/runtime/http_server.h"
#include "kvc/runtime/metrics.h"
#include "kvc/webhook/backend_handlers.h"
#include "kvc/webhook/model_deployment_handlers.h"
#include "kvc/webhook/pod_handlers.h"
#include "kvc/webhook/quota_handlers.h"

namespace kvc::webhook {

inline constexpr std::string_view kMutatePodPath = "/mutate-gpustack-worker-kvcache-core-v1-pod";
inline constexpr std::string_view kValidatePodPath =
    "/validate-gpustack-worker-kvcache-core-v1-pod";

struct WebhookRoutes {
  std::shared_ptr<PodMutator> mutator;
  std::shared_ptr<QuotaAdmission> quota;       // the KVCachePool / KVCachePoolBinding validation
  std::shared_ptr<BackendValidation> backend;  // the KVCacheBackend validation
  std::shared_ptr<ModelDeploymentValidation> model_deployment;  // the ModelDeployment validation
  std::function<bool()> ready;           // caches synced and a certificate loaded
  runtime::Registry* metrics = nullptr;  // rendered on /metrics; must outlive the routes
};

std::map<std::string, runtime::HttpHandler> makeRoutes(const WebhookRoutes& config);

// An InjectionObserver that counts decisions by outcome and refusal reason.
class InjectionMetrics : public InjectionObserver {
public:
  explicit InjectionMetrics(runtime::Registry& metrics);
  void onInjection(const AdmissionRequest& request, const policy::Decision& decision,
                   std::chrono::nanoseconds elapsed) override;

private:
  runtime::CounterFamily& decisions_;
};

// Fans one decision out to several observers (metrics, Events, logs).
class ObserverList : public InjectionObserver {
public:
  void add(std::shared_ptr<InjectionObserver> observer);
  void onInjection(const AdmissionRequest& request, const policy::Decision& decision,
                   std::chrono::nanoseconds elapsed) override;

private:
  std::vector<std::shared_ptr<InjectionObserver>> observers_;
};

}  // namespace kvc::webhook
