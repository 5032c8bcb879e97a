#include "kvc/webhook/routes.h"

#include <chrono>

namespace kvc::webhook {
namespace {

runtime::HttpServerResponse plain(int status, std::string body) {
  return {status, "text/plain; charset=utf-8", std::move(body) + "\n"};
}

// The admission metric families (created on first use, shared by every route).
struct AdmissionMetrics {
  explicit AdmissionMetrics(runtime::Registry& registry)
      : requests(registry.counter("kvcache_admission_requests_total",
                                  "Admission reviews answered, by webhook, result (allowed, "
                                  "refused, error), refusal reason and HTTP-like code.",
                                  {"webhook", "result", "reason", "code"})),
        duration(registry.histogram("kvcache_admission_duration_seconds",
                                    "Time to answer an admission review, decoding to encoding.",
                                    {"webhook"},
                                    {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                     0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10})),
        in_flight(registry.gauge("kvcache_admission_in_flight",
                                 "Admission reviews being answered now.", {"webhook"})) {}
  runtime::CounterFamily& requests;
  runtime::HistogramFamily& duration;
  runtime::GaugeFamily& in_flight;
};

// webhook, result, reason, code. A denial with code 500 is the webhook failing to decide (the
// cluster could not be read), not a refusal: its result is "error".
std::vector<std::string> admissionLabels(const std::string& webhook,
                                         const AdmissionResponse& response) {
  if (response.allowed) {
    return {webhook, "allowed", "", "200"};
  }
  const std::string& reason =
      response.metric_reason.empty() ? response.reason : response.metric_reason;
  return {webhook, response.code >= 500 ? "error" : "refused", reason,
          std::to_string(response.code)};
}

using AdmissionHandler = std::function<AdmissionResponse(const AdmissionRequest&)>;

runtime::HttpHandler admissionRoute(std::string webhook, AdmissionHandler handler,
                                    std::shared_ptr<AdmissionMetrics> metrics) {
  return [webhook = std::move(webhook), handler = std::move(handler),
          metrics = std::move(metrics)](const runtime::HttpServerRequest& http) {
    if (http.method != "POST") {
      return plain(405, "admission reviews are POSTed");
    }
    const std::string content_type = http.header("content-type");
    if (content_type.rfind("application/json", 0) != 0) {
      return plain(415, "content type must be application/json, not \"" + content_type + "\"");
    }
    runtime::Gauge& in_flight = metrics->in_flight.with({webhook});
    in_flight.inc();
    const auto start = std::chrono::steady_clock::now();
    runtime::HttpServerResponse out;
    auto request = decodeAdmissionReview(http.body);
    if (!request.ok()) {
      out = plain(400, request.status().message());
      metrics->requests.with({webhook, "error", "UndecodableReview", "400"}).inc();
    } else {
      const AdmissionResponse response = handler(*request);
      out = {200, "application/json", encodeAdmissionReview(response)};
      metrics->requests.with(admissionLabels(webhook, response)).inc();
    }
    metrics->duration.with({webhook}).observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    in_flight.dec();
    return out;
  };
}

}  // namespace

std::map<std::string, runtime::HttpHandler> makeRoutes(const WebhookRoutes& config) {
  auto metrics = std::make_shared<AdmissionMetrics>(*config.metrics);
  std::map<std::string, runtime::HttpHandler> routes;
  auto mutator = config.mutator;
  routes[std::string(kMutatePodPath)] = admissionRoute(
      "mutate-pod", [mutator](const AdmissionRequest& r) { return mutator->handle(r); }, metrics);
  routes[std::string(kValidatePodPath)] = admissionRoute("validate-pod", validatePod, metrics);
  if (auto quota = config.quota) {
    routes[std::string(kValidatePoolPath)] = admissionRoute(
        "validate-pool", [quota](const AdmissionRequest& r) { return quota->admitPool(r); },
        metrics);
    routes[std::string(kValidateBindingPath)] = admissionRoute(
        "validate-binding", [quota](const AdmissionRequest& r) { return quota->admitBinding(r); },
        metrics);
  }
  if (auto backend = config.backend) {
    routes[std::string(kValidateBackendPath)] = admissionRoute(
        "validate-backend",
        [backend](const AdmissionRequest& r) { return backend->admitBackend(r); }, metrics);
  }
  if (auto deployments = config.model_deployment) {
    routes[std::string(kValidateModelDeploymentPath)] = admissionRoute(
        "validate-modeldeployment",
        [deployments](const AdmissionRequest& r) { return deployments->admitModelDeployment(r); },
        metrics);
  }
  routes["/healthz"] = [](const runtime::HttpServerRequest&) { return plain(200, "ok"); };
  auto ready = config.ready;
  routes["/readyz"] = [ready](const runtime::HttpServerRequest&) {
    return ready && !ready() ? plain(503, "not ready: caches not synced or no certificate")
                             : plain(200, "ok");
  };
  runtime::Registry* registry = config.metrics;
  routes["/metrics"] = [registry](const runtime::HttpServerRequest&) {
    return runtime::HttpServerResponse{200, "text/plain; version=0.0.4; charset=utf-8",
                                       registry->render()};
  };
  return routes;
}

InjectionMetrics::InjectionMetrics(runtime::Registry& metrics)
    : decisions_(metrics.counter("kvcache_injection_decisions_total",
                                 "Pod injection decisions, by outcome (untouched, injected, "
                                 "refused, failed), refusal reason and engine.",
                                 {"outcome", "reason", "engine"})) {}

void InjectionMetrics::onInjection(const AdmissionRequest&, const policy::Decision& decision,
                                   std::chrono::nanoseconds) {
  const std::string reason =
      decision.refusal ? std::string(policy::refusalReasonName(decision.refusal->reason)) : "";
  const std::string engine =
      decision.summary ? std::string(policy::engineRecordName(decision.summary->engine)) : "";
  decisions_.with({std::string(policy::verdictName(decision.verdict)), reason, engine}).inc();
}

void ObserverList::add(std::shared_ptr<InjectionObserver> observer) {
  observers_.push_back(std::move(observer));
}

void ObserverList::onInjection(const AdmissionRequest& request, const policy::Decision& decision,
                               std::chrono::nanoseconds elapsed) {
  for (const auto& observer : observers_) {
    observer->onInjection(request, decision, elapsed);
  }
}

}  // namespace kvc::webhook
