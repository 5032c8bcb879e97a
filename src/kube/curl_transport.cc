// Transport over libcurl.
//
// Plain requests run on pooled easy handles (each keeps its keep-alive connection and TLS
// session, so a controller's steady trickle of requests does not pay a handshake each time);
// cancellation is checked from the progress callback. Streams (watches) run on their own easy
// handle inside a private multi handle so that a stop request wakes curl_multi_poll at once.
#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "kvc/kube/transport.h"

namespace kvc::kube {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr std::size_t kMaxPooledHandles = 16;
constexpr long kConnectTimeoutMs = 10000;
constexpr auto kTokenReloadPeriod = std::chrono::minutes(1);

void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

void append(Slist& list, const std::string& line) {
  curl_slist* next = curl_slist_append(list.get(), line.c_str());
  if (next != nullptr) {
    static_cast<void>(list.release());
    list.reset(next);
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

// Per-exchange state shared with the callbacks.
struct Exchange {
  CURL* easy = nullptr;
  HttpResponse response;
  const std::function<bool(std::string_view)>* on_data = nullptr;  // streaming only
  bool declined = false;                                           // on_data returned false
  std::stop_token stop;
  bool cancelled = false;
};

std::size_t onHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const std::size_t n = size * count;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new response (after a 100 Continue, say): forget the previous headers.
    ex->response.content_type.clear();
    ex->response.retry_after.clear();
    return n;
  }
  const auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    const std::string name = lower(line.substr(0, colon));
    if (name == "content-type") {
      ex->response.content_type = trimmed(line.substr(colon + 1));
    } else if (name == "retry-after") {
      ex->response.retry_after = trimmed(line.substr(colon + 1));
    }
  }
  return n;
}

std::size_t onBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const std::size_t n = size * count;
  if (ex->on_data != nullptr) {
    long code = 0;
    curl_easy_getinfo(ex->easy, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200 && code < 300) {
      if (!(*ex->on_data)(std::string_view(data, n))) {
        ex->declined = true;
        return 0;  // ends the transfer (CURLE_WRITE_ERROR, recognised below)
      }
      return n;
    }
  }
  ex->response.body.append(data, n);
  return n;
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* ex = static_cast<Exchange*>(user);
  if (ex->stop.stop_requested()) {
    ex->cancelled = true;
    return 1;  // aborts with CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

// Hosts curl must reach directly whatever the proxy environment says (Go never proxies them).
std::string noProxyList() {
  std::string list = "localhost,127.0.0.1,::1";
  for (const char* var : {"NO_PROXY", "no_proxy"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') {
      list += ",";
      list += v;
      break;
    }
  }
  return list;
}

// Where requests go: the server URL without a trailing slash (a path prefix such as a proxy's
// "/k8s/clusters/c-1" is kept), and, with tls-server-name, a CONNECT_TO entry that sends
// requests for that name to the configured host, so TLS verifies (and SNI names) the name.
struct Endpoint {
  std::string base_url;
  Slist connect_to;
};

Result<Endpoint> endpointFor(const Config& config) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> url(curl_url(), &curl_url_cleanup);
  auto part = [&](CURLUPart which, unsigned flags = 0) {
    char* text = nullptr;
    std::string out;
    if (curl_url_get(url.get(), which, &text, flags) == CURLUE_OK && text != nullptr) {
      out = text;
    }
    curl_free(text);
    return out;
  };
  if (curl_url_set(url.get(), CURLUPART_URL, config.server.c_str(), 0) != CURLUE_OK) {
    return invalidArgument("the API server URL \"" + config.server +
                           "\" is not a URL; give https://HOST[:PORT][/PATH]");
  }
  const std::string scheme = part(CURLUPART_SCHEME);
  if (scheme != "https" && scheme != "http") {
    return invalidArgument("the API server URL must start with https:// (got \"" + config.server +
                           "\")");
  }
  Endpoint endpoint;
  if (!config.tls_server_name.empty()) {
    const std::string host = part(CURLUPART_HOST);  // IPv6 comes bracketed
    const std::string port = part(CURLUPART_PORT, CURLU_DEFAULT_PORT);
    append(endpoint.connect_to, config.tls_server_name + ":" + port + ":" + host + ":" + port);
    curl_url_set(url.get(), CURLUPART_HOST, config.tls_server_name.c_str(), 0);
    curl_url_set(url.get(), CURLUPART_PORT, port.c_str(), 0);
  }
  curl_url_set(url.get(), CURLUPART_QUERY, nullptr, 0);
  curl_url_set(url.get(), CURLUPART_FRAGMENT, nullptr, 0);
  endpoint.base_url = part(CURLUPART_URL);
  while (!endpoint.base_url.empty() && endpoint.base_url.back() == '/') {
    endpoint.base_url.pop_back();  // request URLs start with "/"
  }
  return endpoint;
}

// CurlTransport implements Transport.
class CurlTransport final : public Transport {
public:
  CurlTransport(Config config, std::string base_url, Slist connect_to)
      : config_(std::move(config)),
        no_proxy_(noProxyList()),
        base_url_(std::move(base_url)),
        connect_to_(std::move(connect_to)) {}

  ~CurlTransport() override {
    for (CURL* easy : pool_) {
      curl_easy_cleanup(easy);
    }
  }

  ApiResult<HttpResponse> send(const HttpRequest& request, std::stop_token stop) override {
    CURL* easy = acquire();
    if (easy == nullptr) {
      return ApiError(ErrorReason::Transport, "cannot create a curl handle");
    }
    Exchange ex;
    ex.easy = easy;
    ex.stop = stop;
    Slist headers;
    configure(easy, request, ex, headers, /*streaming=*/false);
    const CURLcode rc = curl_easy_perform(easy);
    auto result = finish(easy, rc, ex, request);
    release(easy, rc == CURLE_OK);
    return result;
  }

  ApiResult<HttpResponse> stream(const HttpRequest& request,
                                 const std::function<bool(std::string_view)>& on_data,
                                 std::stop_token stop) override {
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> easy(curl_easy_init(), &curl_easy_cleanup);
    std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> multi(curl_multi_init(),
                                                                &curl_multi_cleanup);
    if (!easy || !multi) {
      return ApiError(ErrorReason::Transport, "cannot create a curl handle");
    }
    Exchange ex;
    ex.easy = easy.get();
    ex.on_data = &on_data;
    ex.stop = stop;
    Slist headers;
    configure(easy.get(), request, ex, headers, /*streaming=*/true);
    curl_multi_add_handle(multi.get(), easy.get());
    CURLcode rc = CURLE_OK;
    {
      CURLM* m = multi.get();
      std::stop_callback wake(stop, [m] { curl_multi_wakeup(m); });
      int running = 1;
      while (true) {
        const CURLMcode mc = curl_multi_perform(m, &running);
        if (mc != CURLM_OK) {
          rc = CURLE_RECV_ERROR;
          break;
        }
        if (running == 0) {
          int queued = 0;
          while (CURLMsg* msg = curl_multi_info_read(m, &queued)) {
            if (msg->msg == CURLMSG_DONE) {
              rc = msg->data.result;
            }
          }
          break;
        }
        if (stop.stop_requested()) {
          ex.cancelled = true;
          rc = CURLE_ABORTED_BY_CALLBACK;
          break;
        }
        curl_multi_poll(m, nullptr, 0, 1000, nullptr);
      }
    }
    curl_multi_remove_handle(multi.get(), easy.get());
    return finish(easy.get(), rc, ex, request);
  }

private:
  CURL* acquire() {
    {
      std::lock_guard<std::mutex> guard(pool_mutex_);
      if (!pool_.empty()) {
        CURL* easy = pool_.back();
        pool_.pop_back();
        curl_easy_reset(easy);  // keeps the connection and TLS session caches
        return easy;
      }
    }
    globalInit();
    return curl_easy_init();
  }

  void release(CURL* easy, bool reusable) {
    if (reusable) {
      std::lock_guard<std::mutex> guard(pool_mutex_);
      if (pool_.size() < kMaxPooledHandles) {
        pool_.push_back(easy);
        return;
      }
    }
    curl_easy_cleanup(easy);
  }

  std::string token() {
    if (config_.token_file.empty()) {
      return config_.bearer_token;
    }
    std::lock_guard<std::mutex> guard(token_mutex_);
    const auto now = SteadyClock::now();
    if (!token_loaded_ || now - token_loaded_at_ >= kTokenReloadPeriod) {
      std::ifstream in(config_.token_file, std::ios::binary);
      if (in) {
        std::ostringstream out;
        out << in.rdbuf();
        std::string t = trimmed(out.str());
        if (!t.empty()) {
          token_ = std::move(t);
        }
      }
      // An unreadable file keeps the last good token (the kubelet swaps it atomically).
      if (token_.empty()) {
        token_ = config_.bearer_token;
      }
      token_loaded_ = true;
      token_loaded_at_ = now;
    }
    return token_;
  }

  void configure(CURL* h, const HttpRequest& request, Exchange& ex, Slist& headers,
                 bool streaming) {
    const std::string url = base_url_ + request.url;
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_NOPROXY, no_proxy_.c_str());
    curl_easy_setopt(h, CURLOPT_USERAGENT, config_.user_agent.c_str());
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 10L);
    if (!streaming) {
      const auto timeout = request.timeout.count() > 0 ? request.timeout : config_.timeout;
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
      curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
      curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &onProgress);
      curl_easy_setopt(h, CURLOPT_XFERINFODATA, &ex);
    }
    if (connect_to_) {
      curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to_.get());
    }
    // TLS.
    if (!config_.ca_pem.empty()) {
      curl_blob ca{const_cast<char*>(config_.ca_pem.data()), config_.ca_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
    }
    if (!config_.client_cert_pem.empty()) {
      curl_blob cert{const_cast<char*>(config_.client_cert_pem.data()),
                     config_.client_cert_pem.size(), CURL_BLOB_COPY};
      curl_blob key{const_cast<char*>(config_.client_key_pem.data()), config_.client_key_pem.size(),
                    CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
      curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
      curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    const long verify = config_.insecure_skip_tls_verify ? 0L : 1L;
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, verify);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, verify * 2L);
    // Headers.
    append(headers, "Accept: application/json");
    append(headers, "Expect:");
    const std::string bearer = token();
    if (!bearer.empty()) {
      append(headers, "Authorization: Bearer " + bearer);
    }
    if (!request.content_type.empty()) {
      append(headers, "Content-Type: " + request.content_type);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    // Method and body.
    if (request.method == "GET") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
    }
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &onHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &onBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
  }

  ApiResult<HttpResponse> finish(CURL* h, CURLcode rc, Exchange& ex, const HttpRequest& request) {
    const std::string what = request.method + " " + request.url;
    if (ex.declined && rc == CURLE_WRITE_ERROR) {
      rc = CURLE_OK;
    }
    if (ex.cancelled || (rc == CURLE_ABORTED_BY_CALLBACK && ex.stop.stop_requested())) {
      return ApiError(ErrorReason::Cancelled, what + ": cancelled");
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      return ApiError(ErrorReason::Deadline, what + ": " + curl_easy_strerror(rc));
    }
    if (rc != CURLE_OK) {
      // A stream the server cut after a 2xx header is a normal end for a watch, but a
      // transport failure for everything else.
      return ApiError(ErrorReason::Transport,
                      what + " to " + config_.server + ": " + curl_easy_strerror(rc));
    }
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    ex.response.status = static_cast<int>(code);
    return std::move(ex.response);
  }

  const Config config_;
  const std::string no_proxy_;
  std::string base_url_;
  Slist connect_to_;

  std::mutex pool_mutex_;
  std::vector<CURL*> pool_;

  std::mutex token_mutex_;
  std::string token_;
  bool token_loaded_ = false;
  SteadyClock::time_point token_loaded_at_{};
};

}  // namespace

Result<std::shared_ptr<Transport>> newCurlTransport(const Config& config) {
  globalInit();
  KVC_ASSIGN_OR_RETURN(Endpoint endpoint, endpointFor(config));
  return std::shared_ptr<Transport>(std::make_shared<CurlTransport>(
      config, std::move(endpoint.base_url), std::move(endpoint.connect_to)));
}

}  // namespace kvc::kube
