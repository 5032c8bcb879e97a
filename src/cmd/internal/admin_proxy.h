#pragma once
// The admin port of a managed leader (docs/security.md, "The store's admin API"): `kvcache store
// leader` serves it over mutual TLS in front of the master's own admin listener, which is bound
// to the Pod's loopback. A caller must present a certificate the store CA signed; its
// organization decides what it may do (policy/store/admin_access.h); an allowed request is
// forwarded as is and the master's answer returned as is. A refusal answers 403 and is logged
// once a minute per caller and reason; a failed handshake is logged by the server. The
// certificate, key and CA are re-read when the kubelet updates the mounted Secret, so a renewed
// credential needs no restart of the master.

#include <chrono>
#include <memory>
#include <string>

#include "kvc/common/status.h"
#include "kvc/runtime/http_server.h"
#include "kvc/store/http.h"

namespace kvc::cmd::internal {

struct AdminProxyOptions {
  runtime::ListenAddress listen;  // the admin port, on every interface
  std::string tls_dir;            // tls.crt, tls.key (the serving pair) and ca.crt (clients' CA)
  std::string upstream;           // the master's loopback admin listener, host:port
  std::chrono::milliseconds timeout{10000};  // per forwarded request
};

// Binds, loads the files and starts serving. `upstream` is the transport to the master (libcurl
// when null).
Result<std::unique_ptr<runtime::HttpServer>> startAdminProxy(
    const AdminProxyOptions& options, std::shared_ptr<store::HttpTransport> upstream = nullptr);

// Whether the master behind the proxy serves its data plane: GET /get_all_segments answers 200
// (503 until it is the active leader): the leader's readiness.
bool masterServes(store::HttpTransport& upstream, const std::string& address);

}  // namespace kvc::cmd::internal
