#pragma once
// A tiny plain-HTTP/1.1 server for the manager's probes and metrics (/healthz, /readyz,
// /metrics), on Boost.Beast with one I/O thread. It is deliberately minimal: no TLS, small
// request bodies, short timeouts. The webhook layer serves admission over its own TLS server.
//
// Promises: binds at create() (port 0 picks a free port, reported by port()); a handler's
// answer is written as is; a request larger than 64 KiB or idle for 10 s is dropped; stop()
// closes the listener and every connection, and returns once the I/O thread has exited.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "kvc/common/status.h"

namespace kvc::runtime {

struct HttpServerRequest {
  std::string method;
  std::string target;  // path and query as sent
  std::string path;    // target without the query
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
};

struct HttpServerResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpServerResponse(const HttpServerRequest&)>;

struct ListenAddress {
  std::string host;  // "127.0.0.1", "0.0.0.0", "::1"
  int port = 0;
};

// Parses "host:port", ":port" (all interfaces) or "[v6]:port". "0" or "" disable a listener
// (port -1).
Result<ListenAddress> parseListenAddress(std::string_view text);

class HttpServer {
public:
  static Result<std::unique_ptr<HttpServer>> create(const ListenAddress& address,
                                                    HttpHandler handler);
  virtual ~HttpServer() = default;

  virtual int port() const = 0;
  // "127.0.0.1:8081"
  virtual std::string address() const = 0;
  virtual void start() = 0;
  virtual void stop() = 0;
};

}  // namespace kvc::runtime
