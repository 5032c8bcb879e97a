#pragma once
// The operator's one HTTP(S) server (Boost.Beast over Asio, OpenSSL for TLS): the manager's
// probes and metrics over plain HTTP, the admission webhooks over HTTPS.
//
// Promises:
// - create() binds and loads the certificate, so a busy port or a bad certificate is an error
//   there, before anything is served; port 0 picks a free port, reported by port().
// - Keep-alive. A connection idle for `idle_timeout` is closed. A body over `max_body_bytes` is
//   answered 413 and the rest of it drained before closing (lingering close), so a client still
//   sending reads the answer rather than a reset. A handler that throws answers 500.
// - Bounded for hostile callers (docs/webhook.md#hostile-callers), every bound an option below:
//   a header over `max_header_bytes` is answered 431, a target over `max_target_bytes` 414, a
//   JSON body past `json` 400 before any handler sees it; a request must send its header within
//   `header_timeout` and its body within `request_timeout` of its first byte, read its answer
//   within `write_timeout`, finish the TLS handshake within `handshake_timeout` of accept, or
//   the connection is closed. At most `max_connections` are open (`max_connections_per_peer`
//   from one address): at a cap a new connection takes the slot of a waiting one (idle, no
//   request in progress), else it is accepted and closed at once. Bodies over
//   `small_body_bytes` hold their declared length of `body_budget_bytes` from their header to
//   their answer; one the budget cannot take is answered 503 with Retry-After.
// - So the memory the server holds for requests is at most
//     max_connections x (per-connection state + small_body_bytes) + body_budget_bytes
//   plus what `threads` handlers build from a body at once (the JSON limits bound a parse).
// - Each refusal (a closed or refused connection, an answer 4xx/503 for a limit) is logged once
//   with the peer and the limit, rate-limited to a few lines and a summary line per second, and
//   counted through `on_refusal(reason)`; reasons: connections, peer_connections, idle_evicted,
//   handshake_timeout, header_timeout, request_timeout, write_timeout, header_too_large,
//   target_too_long, body_too_large, body_budget, malformed, json_depth, json_values, json_keys.
// - With TLS, the certificate and key files are re-read when they change, without a restart
//   and without dropping connections: new connections get the new certificate, established
//   ones keep the one they were accepted with. A pair that does not load (half-written during a
//   renewal) keeps the previous one and is tried again on the next tick.
// - With a client CA (mutual TLS), a client must present a certificate that CA signed or its
//   handshake fails; the handler sees the certificate's common name and organization. The CA file
//   is re-read with the pair. A failed handshake is logged with the client's address (at most a
//   line a second).
// - stop() closes the listener and every connection, and returns once the threads have exited.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "kvc/common/json_shape.h"
#include "kvc/common/status.h"

namespace kvc::runtime {

struct HttpServerRequest {
  std::string method;
  std::string target;  // path and query as sent
  std::string path;    // target without the query
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string peer_address;                    // "ip:port" of the client
  // Mutual TLS: the subject common name of the client's verified certificate; "" otherwise.
  std::string peer_common_name;
  std::string peer_organization;  // the same certificate's organization (the caller's group)

  // The value of a header (name in lower case), or "" when absent.
  std::string header(const std::string& name) const;
};

struct HttpServerResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpServerResponse(const HttpServerRequest&)>;

// A handler that dispatches on the exact path, answering 404 for any other.
HttpHandler routeByPath(std::map<std::string, HttpHandler> routes);

struct ListenAddress {
  std::string host;  // "127.0.0.1", "0.0.0.0", "::1"
  int port = 0;
};

// Parses "host:port", ":port" (all interfaces) or "[v6]:port". "0" or "" disable a listener
// (port -1).
Result<ListenAddress> parseListenAddress(std::string_view text);

struct HttpServerOptions {
  ListenAddress listen{"127.0.0.1", 0};
  // Both empty: plain HTTP. Both set: HTTPS with the PEM certificate chain and key.
  std::string cert_file;
  std::string key_file;
  // With TLS only: the PEM bundle of CAs a client certificate must chain to (mutual TLS); empty:
  // clients are not asked for a certificate.
  std::string client_ca_file;
  std::chrono::milliseconds reload_interval{2000};  // how often the files are checked
  // Called after the files changed on disk: true when the new pair is in use, false when it
  // did not load and the previous one is kept.
  std::function<void(bool loaded)> on_certificate_reload;
  std::size_t max_body_bytes = 64 * 1024;
  std::size_t max_header_bytes = 16 * 1024;  // the request line and the fields
  std::size_t max_target_bytes = 4 * 1024;
  JsonShapeLimits json;  // bodies sent as application/json; max_depth 0: not checked
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(10)};     // waiting for a request
  std::chrono::milliseconds header_timeout{std::chrono::seconds(5)};    // from a request's 1st byte
  std::chrono::milliseconds request_timeout{std::chrono::seconds(10)};  // header and body
  std::chrono::milliseconds write_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};  // from accept
  std::size_t max_connections = 128;
  std::size_t max_connections_per_peer = 64;
  std::size_t small_body_bytes = 64 * 1024;
  std::size_t body_budget_bytes = 24 * 1024 * 1024;
  // Called once for every refusal, with its reason (the list above).
  std::function<void(std::string_view reason)> on_refusal;
  int threads = 1;
};

class HttpServer {
public:
  // Binds and loads the certificate; serves nothing until start().
  static Result<std::unique_ptr<HttpServer>> create(HttpServerOptions options, HttpHandler handler);
  // Plain HTTP on `address` with the default limits.
  static Result<std::unique_ptr<HttpServer>> create(const ListenAddress& address,
                                                    HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // "127.0.0.1:8081", "[::1]:8443"
  std::string address() const;
  bool tls() const;
  void start();
  // Idempotent.
  void stop();

  class Impl;

private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvc::runtime
