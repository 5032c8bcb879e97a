// HttpTransport over libcurl: one easy handle per request, so the transport is stateless and
// thread-safe; a reconcile pass makes at most a handful of requests, so connection reuse does
// not matter.
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "kvc/store/http.h"

namespace kvc::store {
namespace {

// A TCP connect inside a cluster takes milliseconds; one that has not completed in 2 s (one SYN
// retransmission) is going to an address nothing answers on: a store Pod force-deleted or whose
// node died, still behind its Service until the proxy's rules catch up. Failing it then, not at
// the request's whole deadline, lets the caller's backoff retry within milliseconds and reach
// the new leader (a failover's first pool pass used to spend its whole 5 s on such a connect).
constexpr long kConnectTimeoutMs = 2000;

struct BodySink {
  std::string body;
  std::size_t limit = 0;
  bool overflow = false;
};

std::size_t writeBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const std::size_t n = size * count;
  if (sink->body.size() + n > sink->limit) {
    // Keep limit+1 bytes at most, then make curl fail the transfer (CURLE_WRITE_ERROR).
    sink->body.append(data, sink->limit + 1 - sink->body.size());
    sink->overflow = true;
    return 0;
  }
  sink->body.append(data, n);
  return n;
}

struct EasyDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// HttpTransport
class CurlTransport final : public HttpTransport {
public:
  StoreResult<HttpResponse> send(const HttpRequest& request) override {
    const std::string what = request.method + " " + request.url;
    std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
    if (!easy) {
      return StoreError(StoreErrorKind::Transport, what + ": cannot create a curl handle");
    }
    CURL* h = easy.get();
    BodySink sink;
    sink.limit = request.max_body_bytes;
    char error_buffer[CURL_ERROR_SIZE] = {};
    const long timeout_ms = static_cast<long>(request.timeout.count());

    std::unique_ptr<curl_slist, SlistDeleter> headers;
    auto add_header = [&headers](const std::string& line) {
      curl_slist* next = curl_slist_append(headers.get(), line.c_str());
      if (next != nullptr) {
        static_cast<void>(headers.release());
        headers.reset(next);
      }
    };
    add_header("Accept: application/json, text/plain;q=0.9, */*;q=0.1");
    add_header("Expect:");  // no 100-continue round trip on PUT

    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, request.tls ? "https" : "http");
#endif
    std::unique_ptr<curl_slist, SlistDeleter> connect_to;
    if (request.tls) {
      // In memory, copied by curl: the keys never touch a file.
      curl_blob ca{const_cast<char*>(request.tls->ca_pem.data()), request.tls->ca_pem.size(),
                   CURL_BLOB_COPY};
      curl_blob cert{const_cast<char*>(request.tls->cert_pem.data()), request.tls->cert_pem.size(),
                     CURL_BLOB_COPY};
      curl_blob key{const_cast<char*>(request.tls->key_pem.data()), request.tls->key_pem.size(),
                    CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
      curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
      curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    }
    if (!request.connect_to.empty()) {
      connect_to.reset(curl_slist_append(nullptr, ("::" + request.connect_to).c_str()));
      curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to.get());
    }
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeout_ms, kConnectTimeoutMs));
    curl_easy_setopt(h, CURLOPT_USERAGENT, "kvcache-operator");
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &writeBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    if (request.method == "GET") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    if (!request.body.empty() || request.method == "PUT" || request.method == "POST") {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
      if (!request.content_type.empty()) {
        add_header("Content-Type: " + request.content_type);
      }
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

    // The last thing before the request leaves: past its not-after instant it is not sent, and
    // before it, curl's deadline (counted from here) ends there.
    if (request.not_after) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *request.not_after - std::chrono::steady_clock::now());
      if (left <= std::chrono::milliseconds::zero()) {
        return StoreError(StoreErrorKind::Fenced,
                          what +
                              ": not sent: its fence passed before it could leave (the "
                              "process was held between the fence's check and the send)");
      }
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                       std::min(timeout_ms, static_cast<long>(left.count())));
    }
    const CURLcode rc = curl_easy_perform(h);
    if (sink.overflow) {
      return StoreError(StoreErrorKind::BodyTooLarge, what + ": response body larger than " +
                                                          std::to_string(request.max_body_bytes) +
                                                          " bytes");
    }
    if (rc != CURLE_OK) {
      std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(rc);
      if (rc == CURLE_OPERATION_TIMEDOUT) {
        return StoreError(
            StoreErrorKind::DeadlineExceeded,
            what + ": no answer within " + std::to_string(timeout_ms) + " ms (" + detail + ")");
      }
      return StoreError(StoreErrorKind::Transport, what + ": " + detail);
    }
    HttpResponse response;
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    response.status = static_cast<int>(status);
    char* content_type = nullptr;
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &content_type) == CURLE_OK &&
        content_type != nullptr) {
      response.content_type = content_type;
    }
    response.body = std::move(sink.body);
    return response;
  }
};

}  // namespace

std::shared_ptr<HttpTransport> newCurlTransport() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  return std::make_shared<CurlTransport>();
}

}  // namespace kvc::store
