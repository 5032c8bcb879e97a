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
#include <string>

#include "kvc/store/error.h"

namespace kvc::store {

inline constexpr std::chrono::milliseconds kDefaultRequestTimeout{5000};
inline constexpr std::size_t kDefaultMaxBodyBytes = std::size_t{8} << 20;  // 8 MiB

struct HttpRequest {
  std::string method = "GET";  // GET, PUT, DELETE, POST
  std::string url;             // absolute: http://host:port/path?query
  std::string body;            // sent when non-empty
  std::string content_type;    // of `body`
  std::chrono::milliseconds timeout = kDefaultRequestTimeout;
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
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

// The libcurl transport (plain HTTP only; http:// URLs).
std::shared_ptr<HttpTransport> newCurlTransport();

}  // namespace kvc::store
