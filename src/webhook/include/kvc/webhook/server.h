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
// connections, 64 from one address; 24 MiB of bodies over 64 KiB in flight; two threads. So the
// server holds at most 128 x 96 KiB (connection state) + 128 x 64 KiB (small bodies) + 24 MiB
// (the budget) + 2 x 20 MiB (two handlers' parsed review and its copy) = 84 MiB for requests,
// whatever its callers do; bench/webhook/hostile.sh measured a peak 73.5 MiB above the idle RSS.
runtime::HttpServerOptions defaultServerOptions();

// Binds, loads the certificate and starts serving `routes`.
Result<std::unique_ptr<runtime::HttpServer>> startServer(runtime::HttpServerOptions options,
                                                         const WebhookRoutes& routes);

}  // namespace kvc::webhook
