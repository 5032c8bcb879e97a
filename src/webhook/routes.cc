#include "kvc/webhook/routes.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace kvc::webhook {
namespace {

constexpr std::string_view kRequests = "kvcache_admission_requests_total";
constexpr std::string_view kDuration = "kvcache_admission_duration_seconds";
constexpr std::string_view kInFlight = "kvcache_admission_in_flight";
constexpr std::string_view kDecisions = "kvcache_injection_decisions_total";

HttpResponse plain(unsigned status, std::string body) {
  return {status, "text/plain", std::move(body) + "\n"};
}

using AdmissionHandler = std::function<AdmissionResponse(const AdmissionRequest&)>;

HttpHandler admissionRoute(std::string webhook, AdmissionHandler handler,
                           std::shared_ptr<MetricsRegistry> metrics) {
  return [webhook = std::move(webhook), handler = std::move(handler),
          metrics = std::move(metrics)](const HttpRequest& http) -> HttpResponse {
    if (http.method != "POST") {
      return plain(405, "admission reviews are POSTed");
    }
    if (http.contentType.rfind("application/json", 0) != 0) {
      return plain(415, "content type must be application/json, not \"" + http.contentType +
                            "\"");
    }
    const MetricLabels labels{{"webhook", webhook}};
    metrics->add(kInFlight, labels, 1);
    const auto start = std::chrono::steady_clock::now();
    HttpResponse out;
    auto request = decodeAdmissionReview(http.body);
    if (!request.ok()) {
      out = plain(400, request.status().message());
      metrics->increment(kRequests, {{"webhook", webhook}, {"allowed", "error"}, {"code", "400"}});
    } else {
      const AdmissionResponse response = handler(*request);
      out = {200, "application/json", encodeAdmissionReview(response)};
      metrics->increment(kRequests, {{"webhook", webhook},
                                     {"allowed", response.allowed ? "true" : "false"},
                                     {"code", std::to_string(response.allowed ? 200
                                                                              : response.code)}});
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics->observe(kDuration, labels, seconds);
    metrics->add(kInFlight, labels, -1);
    return out;
  };
}

}  // namespace

void describeAdmissionMetrics(MetricsRegistry& metrics) {
  metrics.describe(std::string(kRequests), MetricsRegistry::Type::Counter,
                   "Admission reviews answered, by webhook, verdict and HTTP-like code.");
  metrics.describe(std::string(kDuration), MetricsRegistry::Type::Histogram,
                   "Time to answer an admission review, decoding to encoding.",
                   {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                    0.5, 1, 2.5, 5, 10});
  metrics.describe(std::string(kInFlight), MetricsRegistry::Type::Gauge,
                   "Admission reviews being answered now.");
  metrics.describe(std::string(kDecisions), MetricsRegistry::Type::Counter,
                   "Pod injection decisions, by outcome (untouched, injected, refused, failed), "
                   "refusal reason and engine.");
}

std::map<std::string, HttpHandler> makeRoutes(const WebhookRoutes& config) {
  describeAdmissionMetrics(*config.metrics);
  std::map<std::string, HttpHandler> routes;
  auto mutator = config.mutator;
  routes[std::string(kMutatePodPath)] = admissionRoute(
      "mutate-pod", [mutator](const AdmissionRequest& r) { return mutator->handle(r); },
      config.metrics);
  routes[std::string(kValidatePodPath)] =
      admissionRoute("validate-pod", validatePodUpdate, config.metrics);
  routes["/healthz"] = [](const HttpRequest&) { return plain(200, "ok"); };
  auto ready = config.ready;
  routes["/readyz"] = [ready](const HttpRequest&) {
    return ready && !ready() ? plain(503, "not ready: caches not synced or no certificate")
                             : plain(200, "ok");
  };
  auto metrics = config.metrics;
  routes["/metrics"] = [metrics](const HttpRequest&) {
    return HttpResponse{200, "text/plain; version=0.0.4", metrics->exposition()};
  };
  return routes;
}

InjectionMetrics::InjectionMetrics(std::shared_ptr<MetricsRegistry> metrics)
    : metrics_(std::move(metrics)) {}

void InjectionMetrics::onInjection(const AdmissionRequest&, const policy::Decision& decision,
                                   std::chrono::nanoseconds) {
  std::string reason;
  std::string engine;
  if (decision.refusal) {
    reason = std::string(policy::refusalReasonName(decision.refusal->reason));
  }
  if (decision.summary) {
    engine = std::string(policy::engineRecordName(decision.summary->engine));
  }
  metrics_->increment(kDecisions, {{"outcome", std::string(policy::verdictName(decision.verdict))},
                                   {"reason", reason},
                                   {"engine", engine}});
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
