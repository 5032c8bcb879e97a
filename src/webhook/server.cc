#include "kvc/webhook/server.h"

#include <chrono>
#include <string>
#include <utility>

namespace kvc::webhook {

runtime::HttpServerOptions defaultServerOptions() {
  runtime::HttpServerOptions options;
  options.max_body_bytes = 8 * 1024 * 1024;
  options.idle_timeout = std::chrono::seconds(90);
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
  }
  KVC_ASSIGN_OR_RETURN(
      auto server,
      runtime::HttpServer::create(std::move(options), runtime::routeByPath(makeRoutes(routes))));
  server->start();
  return server;
}

}  // namespace kvc::webhook
