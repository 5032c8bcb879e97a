#pragma once
// The HTTP transport under the admin client: one request, one answer, with the limits of
// reference/contract.md §6 applied below every caller.
//
// Promises of every transport:
//   - a request never outlives its own deadline (`timeout`), connect time included;
//   - redirects are never followed (a 3xx comes back as an answer, which callers treat as an
//     unexpected status);
//   - a body longer than `max_body_bytes` is not kept: reading stops at limit+1 bytes and the
//     request fails as BodyTooLarge ("larger than N bytes");
//   - proxies from the environment are ignored: the admin port is reached directly.

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "kvc/store/error.h"

namespace kvc::store {

inline constexpr std::chrono::milliseconds kDefaultRequestTimeout{5000};
inline constexpr std::size_t kDefaultMaxBodyBytes = std::size_t{8} << 20;  // 8 MiB

// Mutual TLS to a managed master's admin proxy (policy/store/admin_access.h), PEM text.
struct TlsCredentials {
  std::string ca_pem;    // the CAs the server's certificate must chain to
  std::string cert_pem;  // the client's certificate
  std::string key_pem;   // and its key
};

struct HttpRequest {
  std::string method = "GET";  // GET, PUT, DELETE, POST
  std::string url;             // absolute: http[s]://host:port/path?query
  std::string body;            // sent when non-empty
  std::string content_type;    // of `body`
  std::chrono::milliseconds timeout = kDefaultRequestTimeout;
  // Not sent after this instant (the write fence, fenced_transport.h): the transport checks it,
  // and cuts its deadline to it, as the last thing before the request leaves — so a process
  // paused between the fence's check and the send does not send it when it resumes.
  std::optional<std::chrono::steady_clock::time_point> not_after;
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  // https:// URLs: the server's certificate is verified against tls->ca_pem, for the URL's host,
  // and tls's certificate is presented. nullptr: plain http:// only.
  std::shared_ptr<const TlsCredentials> tls;
  // "host:port" to connect to instead of the URL's (its name is still the one verified): a
  // Service's ClusterIP for a certificate that names the Service.
  std::string connect_to;
};

struct HttpResponse {
  int status = 0;
  std::string content_type;  // as sent, may be empty
  std::string body;
};

// One HTTP exchange. Implementations are safe to call from several threads at once.
class HttpTransport {
public:
  virtual ~HttpTransport() = default;

  // Sends `request` and returns the answer, whatever its status. Fails only when no complete
  // answer arrived: Transport, DeadlineExceeded or BodyTooLarge.
  virtual StoreResult<HttpResponse> send(const HttpRequest& request) = 0;
};

// The libcurl transport: http://, and https:// with TlsCredentials (mutual TLS).
std::shared_ptr<HttpTransport> newCurlTransport();

}  // namespace kvc::store
