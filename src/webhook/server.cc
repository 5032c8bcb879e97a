#include "kvc/webhook/server.h"

#include <chrono>
#include <string>
#include <utility>

#include "kvc/webhook/admission.h"

namespace kvc::webhook {

runtime::HttpServerOptions defaultServerOptions() {
  runtime::HttpServerOptions options;
  // The API server sends objects of at most 3 MiB (its request limit; etcd stores 1.5 MiB), a
  // review one of them, two on UPDATE: 8 MiB leaves room for the envelope.
  options.max_body_bytes = kMaxReviewBytes;
  options.max_header_bytes = 16 * 1024;
  options.max_target_bytes = 4 * 1024;
  options.json = kReviewShapeLimits;
  // The API server's idle connections are closed by it (Go's 90 s): the server closing them
  // first could close one a review is being written onto, and Go does not retry a POST.
  options.idle_timeout = std::chrono::seconds(90);
  options.header_timeout = std::chrono::seconds(5);
  // The longest timeoutSeconds of the webhook configurations: the API server has given up on
  // a review slower than that.
  options.request_timeout = std::chrono::seconds(10);
  options.write_timeout = std::chrono::seconds(10);
  options.handshake_timeout = std::chrono::seconds(10);
  options.max_connections = 128;
  options.max_connections_per_peer = 64;
  options.small_body_bytes = 64 * 1024;
  options.body_budget_bytes = 24 * 1024 * 1024;
  options.threads = 2;
  return options;
}

Result<std::unique_ptr<runtime::HttpServer>> startServer(runtime::HttpServerOptions options,
                                                         const WebhookRoutes& routes) {
  if (routes.metrics != nullptr) {
    runtime::CounterFamily& reloads = routes.metrics->counter(
        "kvcache_webhook_certificate_reloads_total",
        "Certificate reloads after the files changed on disk, by result.", {"result"});
    options.on_certificate_reload = [&reloads](bool loaded) {
      reloads.with({loaded ? "success" : "failure"}).inc();
    };
    runtime::CounterFamily& refusals = routes.metrics->counter(
        "kvcache_webhook_refusals_total",
        "Connections and requests the webhook server refused or closed for a limit, by reason.",
        {"reason"});
    options.on_refusal = [&refusals](std::string_view reason) {
      refusals.with({std::string(reason)}).inc();
    };
  }
  KVC_ASSIGN_OR_RETURN(
      auto server,
      runtime::HttpServer::create(std::move(options), runtime::routeByPath(makeRoutes(routes))));
  server->start();
  return server;
}

}  // namespace kvc::webhook
