#pragma once
// The HTTP(S) exchange under the client: one request, one answer, or one streamed body.
//
// Promises of every transport:
//   - TLS is verified against Config::ca_pem (or the system store) unless the config says
//     insecure_skip_tls_verify, which loading refuses by default;
//   - a non-watch request never outlives its deadline (HttpRequest::timeout, else
//     Config::timeout), connect time included;
//   - a request stops promptly when its stop_token is requested (ErrorReason::Cancelled);
//   - redirects are never followed; proxies are never used for loopback servers;
//   - implementations are safe to call from several threads at once.

#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "kvc/common/status.h"
#include "kvc/kube/config.h"
#include "kvc/kube/error.h"
#include "kvc/kube/request.h"

namespace kvc::kube {

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string retry_after;  // raw Retry-After header, when sent
};

class Transport {
public:
  virtual ~Transport() = default;

  // Sends `request` and returns the answer, whatever its status. Fails only when no complete
  // answer arrived (Transport, Deadline, Cancelled).
  virtual ApiResult<HttpResponse> send(const HttpRequest& request, std::stop_token stop) = 0;

  // Sends a streaming request. While the answer is 2xx, body bytes go to `on_data` as they
  // arrive (returning false ends the stream early) and the returned body is empty; a non-2xx
  // body is collected and returned instead. Ends when the server closes the stream, `on_data`
  // declines, or `stop` is requested (then the result is Cancelled).
  virtual ApiResult<HttpResponse> stream(const HttpRequest& request,
                                         const std::function<bool(std::string_view)>& on_data,
                                         std::stop_token stop) = 0;
};

// The libcurl transport (HTTP/1.1; TLS through OpenSSL with in-memory PEM blobs). Fails when
// the configuration cannot be used (a server URL libcurl cannot parse).
Result<std::shared_ptr<Transport>> newCurlTransport(const Config& config);

}  // namespace kvc::kube
