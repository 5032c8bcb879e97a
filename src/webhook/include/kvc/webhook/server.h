#pragma once
// The HTTPS server the webhooks are served from (Boost.Beast over Asio and OpenSSL).
//
// TLS certificate and key come from files and are re-read when they change, without a restart
// and without dropping connections: a new certificate is used for new connections while the
// established ones keep the context they were accepted with. Keep-alive, bounded bodies, idle
// timeouts; handlers are plain functions from a request to a response, routed by path.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "kvc/common/status.h"
#include "kvc/runtime/metrics.h"

namespace kvc::webhook {

struct HttpRequest {
  std::string method;
  std::string path;  // the target without its query
  std::string contentType;
  std::string body;
};

struct HttpResponse {
  unsigned status = 200;
  std::string contentType = "application/json";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

class HttpsServer {
public:
  struct Options {
    std::string address = "127.0.0.1";
    unsigned short port = 0;  // 0: an ephemeral port, read back with port()
    // Both empty: plain HTTP (for probes and metrics only; the API server requires TLS).
    std::string certFile;
    std::string keyFile;
    std::chrono::milliseconds reloadInterval{2000};
    std::size_t maxBodyBytes = 8 * 1024 * 1024;
    int threads = 2;
    std::chrono::seconds idleTimeout{90};
  };

  // Binds, loads the certificate and starts serving on `threads` threads.
  static Result<std::unique_ptr<HttpsServer>> start(Options options,
                                                    std::map<std::string, HttpHandler> routes,
                                                    runtime::Registry* metrics);
  ~HttpsServer();
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  unsigned short port() const;
  bool tls() const;
  // True once a certificate is loaded (always true for plain HTTP).
  bool certificateLoaded() const;
  // Stops accepting, closes connections and joins the threads. Idempotent.
  void stop();

  class Impl;

private:
  explicit HttpsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvc::webhook
