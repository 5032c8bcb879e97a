#pragma once
// The webhooks' server: the routes of routes.h on the operator's HTTP(S) server
// (runtime::HttpServer), with TLS from certificate files re-read when they change, and the
// reloads counted in `kvcache_webhook_certificate_reloads_total{result}`.

#include <memory>

#include "kvc/common/status.h"
#include "kvc/runtime/http_server.h"
#include "kvc/runtime/metrics.h"
#include "kvc/webhook/routes.h"

namespace kvc::webhook {

// The limits for admission: bodies up to 8 MiB (a review carries whole Pods, two of them on
// UPDATE), keep-alive connections idle up to 90 s (the API server reuses them), two threads.
runtime::HttpServerOptions defaultServerOptions();

// Binds, loads the certificate and starts serving `routes`.
Result<std::unique_ptr<runtime::HttpServer>> startServer(runtime::HttpServerOptions options,
                                                         const WebhookRoutes& routes);

}  // namespace kvc::webhook
