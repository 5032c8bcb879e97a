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

// The limits for admission, each explained in docs/webhook.md#hostile-callers: bodies up to
// 8 MiB (a review carries whole objects, two of them on UPDATE) of the shape kReviewShapeLimits,
// headers up to 16 KiB, targets 4 KiB; the header within 5 s and the whole request within 10 s
// of its first byte; keep-alive connections idle up to 90 s (the API server reuses them); 128
// connections, 64 from one address; 24 MiB of bodies over 64 KiB in flight; two threads.
runtime::HttpServerOptions defaultServerOptions();

// Binds, loads the certificate and starts serving `routes`.
Result<std::unique_ptr<runtime::HttpServer>> startServer(runtime::HttpServerOptions options,
                                                         const WebhookRoutes& routes);

}  // namespace kvc::webhook
