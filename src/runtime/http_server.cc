#include "kvc/runtime/http_server.h"

#include "x509_subject.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "internal/body_budget.h"
#include "internal/connection_slots.h"
#include "internal/refusal_log.h"

namespace kvc::runtime {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

namespace {

constexpr auto kDrainTimeout = std::chrono::seconds(2);
constexpr std::size_t kMaxDrainBytes = 64 * 1024 * 1024;
// What one read asks for; the read buffer holds at most a header and one such chunk.
constexpr std::size_t kReadChunk = 16 * 1024;
constexpr auto kRefusalSummaryInterval = std::chrono::seconds(1);

// What identifies a version of the certificate files on disk.
struct FileStamp {
  long long mtime_ns = 0;
  long long size = -1;
  unsigned long long inode = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp stampOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return {};
  }
  return {static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec,
          static_cast<long long>(st.st_size), static_cast<unsigned long long>(st.st_ino)};
}

Result<std::shared_ptr<ssl::context>> loadTlsContext(const HttpServerOptions& options) {
  const std::string& cert_file = options.cert_file;
  const std::string& key_file = options.key_file;
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use);
  // An idle connection keeps no TLS read and write buffers (~34 KiB), only its session state.
  SSL_CTX_set_mode(context->native_handle(), SSL_MODE_RELEASE_BUFFERS);
  boost::system::error_code ec;
  context->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    return invalidArgument("TLS certificate " + cert_file + ": " + ec.message());
  }
  context->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) {
    return invalidArgument("TLS key " + key_file + ": " + ec.message());
  }
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return invalidArgument("TLS key " + key_file + " does not match certificate " + cert_file);
  }
  if (!options.client_ca_file.empty()) {
    // Mutual TLS: a client without a certificate this bundle signed fails the handshake.
    context->load_verify_file(options.client_ca_file, ec);
    if (ec) {
      return invalidArgument("TLS client CA " + options.client_ca_file + ": " + ec.message());
    }
    context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.client_ca_file.c_str());
    if (names != nullptr) {
      SSL_CTX_set_client_CA_list(context->native_handle(), names);  // takes ownership
    }
  }
  return context;
}

// The subject of the verified peer certificate, {common name, organization}, or {"", ""}.
std::pair<std::string, std::string> peerSubject(SSL* ssl) {
  X509* peer = SSL_get1_peer_certificate(ssl);
  if (peer == nullptr) {
    return {};
  }
  std::pair<std::string, std::string> subject{internal::subjectEntry(peer, NID_commonName),
                                              internal::subjectEntry(peer, NID_organizationName)};
  X509_free(peer);
  return subject;
}

std::string lowerCased(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool isJson(const std::string& content_type) {
  return lowerCased(content_type).rfind("application/json", 0) == 0;
}

std::string peerOf(const tcp::endpoint& endpoint) {
  const std::string host = endpoint.address().to_string();
  return (endpoint.address().is_v6() ? "[" + host + "]" : host) + ":" +
         std::to_string(endpoint.port());
}

std::string durationText(std::chrono::milliseconds d) {
  return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s"
                               : std::to_string(d.count()) + " ms";
}

}  // namespace

std::string HttpServerRequest::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

HttpHandler routeByPath(std::map<std::string, HttpHandler> routes) {
  return [routes = std::move(routes)](const HttpServerRequest& request) {
    auto it = routes.find(request.path);
    if (it == routes.end()) {
      return HttpServerResponse{404, "text/plain; charset=utf-8", "not found\n"};
    }
    return it->second(request);
  };
}

class HttpServer::Impl {
public:
  Impl(HttpServerOptions options, HttpHandler handler)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        slots_(options_.max_connections, options_.max_connections_per_peer),
        budget_(options_.body_budget_bytes),
        refusals_(options_.on_refusal),
        acceptor_(control_),
        reload_timer_(control_),
        summary_timer_(control_) {}

  Status listen() {
    if (options_.cert_file.empty() != options_.key_file.empty()) {
      return invalidArgument("a TLS certificate and key are given together, or neither");
    }
    if (!options_.client_ca_file.empty() && options_.cert_file.empty()) {
      return invalidArgument("a client CA needs TLS: give a certificate and key too");
    }
    if (tls()) {
      KVC_ASSIGN_OR_RETURN(auto context, loadTlsContext(options_));
      context_ = std::move(context);
      cert_stamp_ = stampOf(options_.cert_file);
      key_stamp_ = stampOf(options_.key_file);
      ca_stamp_ = stampOf(options_.client_ca_file);
    }
    const ListenAddress& at = options_.listen;
    boost::system::error_code ec;
    const auto ip = asio::ip::make_address(at.host, ec);
    if (ec) {
      return invalidArgument("\"" + at.host + "\" is not an IP address");
    }
    const tcp::endpoint endpoint(ip, static_cast<unsigned short>(at.port));
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) {
      acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    }
    if (!ec) {
      acceptor_.bind(endpoint, ec);
    }
    if (!ec) {
      acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
      return unavailable("cannot listen on " + at.host + ":" + std::to_string(at.port) + ": " +
                         ec.message());
    }
    port_ = acceptor_.local_endpoint().port();
    refusals_.setServer(address());
    return okStatus();
  }

  void start() {
    if (!threads_.empty() || stopped_) {
      return;
    }
    accept();
    if (tls()) {
      scheduleReload();
    }
    scheduleSummary();
    const int threads = std::max(1, options_.threads);
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this] { io_.run(); });
    }
  }

  void stop() {
    if (stopped_.exchange(true)) {
      return;
    }
    // Closing the listener, the timer and every connection leaves io_ without work. On the
    // control strand, so that it never runs alongside the accept or reload handlers.
    asio::post(control_, [this] { closeAll(); });
    if (threads_.empty()) {
      io_.run();
    }
    for (std::thread& thread : threads_) {
      thread.join();
    }
  }

  bool tls() const { return !options_.cert_file.empty(); }
  int port() const { return port_; }
  std::string address() const {
    const std::string& host = options_.listen.host;
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
           std::to_string(port_);
  }
  const HttpServerOptions& options() const { return options_; }

  HttpServerResponse dispatch(const HttpServerRequest& request) const {
    try {
      return handler_(request);
    } catch (const std::exception& e) {
      spdlog::error("http server {}: handler for {} threw: {}", address(), request.path, e.what());
      return {500, "text/plain; charset=utf-8", "internal error\n"};
    }
  }

  ConnectionSlots& slots() { return slots_; }
  BodyBudget& budget() { return budget_; }
  RefusalLog& refusals() { return refusals_; }

private:
  void accept();
  void admit(tcp::socket socket);
  void scheduleReload();
  void reloadIfChanged();
  void scheduleSummary();

  void closeAll() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    reload_timer_.cancel();
    summary_timer_.cancel();
    for (const auto& connection : slots_.all()) {
      connection->abort();
    }
  }

  std::shared_ptr<ssl::context> currentContext() const {
    std::lock_guard lock(context_mutex_);
    return context_;
  }

  HttpServerOptions options_;
  HttpHandler handler_;

  ConnectionSlots slots_;
  BodyBudget budget_;
  RefusalLog refusals_;

  mutable std::mutex context_mutex_;
  std::shared_ptr<ssl::context> context_;
  FileStamp cert_stamp_;
  FileStamp key_stamp_;
  FileStamp ca_stamp_;

  // Declared last so that it is destroyed first: the handlers it may still hold own sessions,
  // whose destructors use the members above.
  asio::io_context io_;
  // Serialises the listener, the reload timer and closeAll() across the I/O threads.
  asio::strand<asio::io_context::executor_type> control_{asio::make_strand(io_)};
  tcp::acceptor acceptor_;
  asio::steady_timer reload_timer_;
  asio::steady_timer summary_timer_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopped_{false};
  int port_ = 0;
};

namespace {

// One keep-alive connection. `Stream` is a beast::tcp_stream or a TlsStream over one. Its life:
// (TLS: wait for the first bytes, handshake) then, per request, wait for the first byte, read
// the header, read the body, answer. Waiting it may be evicted (ConnectionSlots); every other
// step has its deadline.
template <typename Stream>
class Session : public Connection, public std::enable_shared_from_this<Session<Stream>> {
public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Session(Stream stream, HttpServer::Impl& server, std::shared_ptr<ssl::context> context,
          std::string peer)
      : stream_(std::move(stream)),
        server_(server),
        context_(std::move(context)),
        peer_(std::move(peer)),
        buffer_(server.options().max_header_bytes + kReadChunk) {}

  ~Session() override {
    giveBack();
    server_.slots().release(slot_);
  }

  void start(std::uint64_t slot) {
    slot_ = slot;
    accepted_ = std::chrono::steady_clock::now();
    if constexpr (kTls) {
      awaitHello();
    } else {
      awaitRequest();
    }
  }

  // Closes the connection on its own strand, where every other use of stream_ runs.
  void abort() override {
    asio::post(lowest().get_executor(), [self = this->shared_from_this()] {
      beast::error_code ignored;
      auto& socket = self->lowest().socket();
      socket.shutdown(tcp::socket::shutdown_both, ignored);
      socket.close(ignored);
    });
  }

private:
  const HttpServerOptions& limits() const { return server_.options(); }
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void refuse(std::string_view reason, const std::string& detail) {
    server_.refusals().refuse(reason, peer_, detail);
  }

  // TLS: until its first bytes arrive the connection waits (and may be evicted); the handshake
  // must end within handshake_timeout of accept.
  void awaitHello() {
    lowest().expires_at(accepted_ + limits().handshake_timeout);
    lowest().async_read_some(buffer_.prepare(2048),
                             [self = this->shared_from_this()](
                                 beast::error_code ec, std::size_t n) { self->onHello(ec, n); });
  }

  void onHello(beast::error_code ec, std::size_t n) {
    if (ec) {
      handshakeFailed(ec);
      return;
    }
    buffer_.commit(n);
    if (!server_.slots().setBusy(slot_, false)) {
      return;  // evicted meanwhile
    }
    if constexpr (kTls) {
      stream_.async_handshake(
          ssl::stream_base::server, buffer_.data(),
          [self = this->shared_from_this()](beast::error_code handshake, std::size_t) {
            self->buffer_.consume(self->buffer_.size());  // all handed to OpenSSL
            if (handshake) {
              self->handshakeFailed(handshake);
            } else {
              self->peer_subject_ = peerSubject(self->stream_.native_handle());
              self->awaitRequest();
            }
          });
    }
  }

  // A timeout, or a client refused by TLS itself (no certificate or an untrusted one where the
  // server asks for one, plain HTTP on the TLS port): logged with who it was.
  void handshakeFailed(beast::error_code ec) {
    if (ec == beast::error::timeout) {
      refuse("handshake_timeout",
             "no TLS handshake within " + durationText(limits().handshake_timeout) + " of accept");
    } else if (ec != asio::error::operation_aborted && ec != asio::error::eof &&
               ec != asio::error::connection_reset) {
      refuse("handshake_refused", "TLS handshake refused: " + ec.message());
    }
  }

  // Waiting for a request's first byte, for idle_timeout; the connection may be evicted.
  void awaitRequest() {
    if (!server_.slots().setWaiting(slot_)) {
      return;
    }
    if (buffer_.size() > 0) {
      beginRequest();  // pipelined: the next request is here already
      return;
    }
    buffer_.shrink_to_fit();
    lowest().expires_after(limits().idle_timeout);
    stream_.async_read_some(buffer_.prepare(kReadChunk), [self = this->shared_from_this()](
                                                             beast::error_code ec, std::size_t n) {
      if (ec) {
        return;  // idle timeout, closed by the client, evicted: nothing to answer
      }
      self->buffer_.commit(n);
      self->beginRequest();
    });
  }

  void beginRequest() {
    if (!server_.slots().setBusy(slot_, true)) {
      return;
    }
    request_start_ = std::chrono::steady_clock::now();
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(limits().max_header_bytes));
    parser_->body_limit(limits().max_body_bytes);
    lowest().expires_at(request_start_ +
                        std::min(limits().header_timeout, limits().request_timeout));
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) {
                                self->readFailed(ec, true);
                              } else {
                                self->onHeader();
                              }
                            });
  }

  void onHeader() {
    const auto& header = parser_->get();
    if (header.target().size() > limits().max_target_bytes) {
      refuse("target_too_long",
             "request target over " + std::to_string(limits().max_target_bytes) + " bytes");
      answerRefusal(414, "request target too long\n");
      return;
    }
    const auto length = parser_->content_length();
    const std::size_t declared = length ? static_cast<std::size_t>(*length)
                                        : (parser_->chunked() ? limits().max_body_bytes : 0);
    if (declared > limits().small_body_bytes) {
      if (!server_.budget().take(declared)) {
        refuse("body_budget", "a body of " + std::to_string(declared) + " bytes with " +
                                  std::to_string(server_.budget().used()) + " of " +
                                  std::to_string(server_.budget().capacity()) +
                                  " bytes of bodies in flight");
        answerRefusal(503, "too many large requests in flight, retry\n");
        return;
      }
      charged_ = declared;
    }
    lowest().expires_at(request_start_ + limits().request_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) {
                         self->readFailed(ec, false);
                       } else {
                         self->onBody();
                       }
                     });
  }

  // A read that ended the request early: a deadline, a limit, a malformed request, or the
  // client gone (nothing to answer).
  void readFailed(beast::error_code ec, bool header) {
    if (ec == beast::error::timeout) {  // the stream closed the socket
      refuse(header ? "header_timeout" : "request_timeout",
             header ? "no complete header within " + durationText(limits().header_timeout)
                    : "no complete body within " + durationText(limits().request_timeout) +
                          " of the request's first byte");
    } else if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      refuse("header_too_large",
             "header over " + std::to_string(limits().max_header_bytes) + " bytes");
      answerRefusal(431, "request header fields too large\n");
    } else if (ec == http::error::body_limit) {
      refuse("body_too_large", "body over " + std::to_string(limits().max_body_bytes) + " bytes");
      answerRefusal(413, "request body too large\n");
    } else if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
               ec != http::error::end_of_stream && ec != http::error::partial_message) {
      refuse("malformed", "malformed request: " + ec.message());
      answerRefusal(400, "malformed request\n");
    }
  }

  void onBody() {
    auto& message = parser_->get();
    HttpServerRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.path = request.target.substr(0, request.target.find('?'));
    request.body = std::move(message.body());
    request.peer_address = peer_;
    request.peer_common_name = peer_subject_.first;
    request.peer_organization = peer_subject_.second;
    for (const auto& field : message) {
      const auto name = field.name_string();
      request.headers[lowerCased({name.data(), name.size()})] = std::string(field.value());
    }
    const unsigned version = message.version();
    const bool keep_alive = message.keep_alive();
    parser_.reset();
    if (limits().json.max_depth != 0 && isJson(request.header("content-type"))) {
      if (auto refusal = checkJsonShape(request.body, limits().json)) {
        refuse(refusal->limit, refusal->message);
        giveBack();
        respond({400, "text/plain; charset=utf-8", refusal->message + "\n"}, version, false);
        return;
      }
    }
    HttpServerResponse response = server_.dispatch(request);
    request = HttpServerRequest();  // the body goes before the answer is written
    giveBack();
    respond(std::move(response), version, keep_alive);
  }

  // An answer to a refused request, then a lingering close (the client may still be sending).
  void answerRefusal(int status, std::string body) {
    giveBack();
    draining_ = true;
    respond({status, "text/plain; charset=utf-8", std::move(body)}, 11, false);
  }

  void giveBack() {
    server_.budget().give(charged_);
    charged_ = 0;
  }

  void respond(HttpServerResponse response, unsigned version, bool keep_alive) {
    auto reply = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), version);
    reply->set(http::field::server, "kvcache-operator");
    reply->set(http::field::content_type, response.content_type);
    if (response.status == 503) {
      reply->set(http::field::retry_after, "1");
    }
    reply->keep_alive(keep_alive);
    reply->body() = std::move(response.body);
    reply->prepare_payload();
    lowest().expires_after(limits().write_timeout);
    http::async_write(stream_, *reply,
                      [self = this->shared_from_this(), reply](beast::error_code ec, std::size_t) {
                        if (ec == beast::error::timeout) {
                          self->refuse("write_timeout",
                                       "the answer was not read within " +
                                           durationText(self->limits().write_timeout));
                        }
                        if (ec) {
                          return;
                        }
                        if (reply->keep_alive()) {
                          self->awaitRequest();
                        } else if (self->draining_) {
                          self->drain();
                        } else {
                          self->close();
                        }
                      });
  }

  // Lingering close (as web servers do after an early answer): a client still sending the rest
  // of an oversized body would otherwise get a reset instead of reading the answer.
  void drain() {
    buffer_.consume(buffer_.size());
    lowest().expires_after(kDrainTimeout);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > kMaxDrainBytes) {
                                self->close();
                              } else {
                                self->drain();
                              }
                            });
  }

  void close() {
    if constexpr (kTls) {
      lowest().expires_after(std::chrono::seconds(5));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {});
    } else {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  Stream stream_;
  HttpServer::Impl& server_;
  std::shared_ptr<ssl::context> context_;  // keeps the certificate this connection was given
  const std::string peer_;
  std::uint64_t slot_ = 0;
  std::chrono::steady_clock::time_point accepted_;
  std::chrono::steady_clock::time_point request_start_;
  std::pair<std::string, std::string> peer_subject_;  // {common name, organization}
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::size_t charged_ = 0;  // taken from the body budget by the request in progress
  bool draining_ = false;
  std::size_t drained_ = 0;
};

template <typename Stream>
void startSession(HttpServer::Impl& server, Stream stream, std::shared_ptr<ssl::context> context,
                  const tcp::endpoint& peer) {
  auto session = std::make_shared<Session<Stream>>(std::move(stream), server, std::move(context),
                                                   peerOf(peer));
  auto admission = server.slots().admit(peer.address().to_string(), session);
  const HttpServerOptions& o = server.options();
  if (admission.evicted) {
    admission.evicted->abort();
    server.refusals().refuse("idle_evicted", admission.evicted_peer,
                             "closed while waiting, its slot taken by a new connection");
  }
  if (admission.id == 0) {
    const bool peer_cap = admission.refusal == "peer_connections";
    server.refusals().refuse(
        admission.refusal, peerOf(peer),
        std::to_string(peer_cap ? o.max_connections_per_peer : o.max_connections) +
            (peer_cap ? " connections open from this address" : " connections open") +
            ", none waiting: connection closed");
    return;  // the session, never started, closes the socket
  }
  session->start(admission.id);
}

}  // namespace

void HttpServer::Impl::accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
    if (stopped_) {
      return;  // closeAll() ran or is queued behind this handler on the control strand
    }
    if (ec) {
      if (ec != asio::error::operation_aborted) {
        spdlog::warn("http server {}: accept failed: {}", address(), ec.message());
      }
      if (acceptor_.is_open()) {
        accept();
      }
      return;
    }
    admit(std::move(socket));
    accept();
  });
}

void HttpServer::Impl::admit(tcp::socket socket) {
  beast::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) {
    return;  // gone already
  }
  if (tls()) {
    auto context = currentContext();
    startSession(*this, TlsStream(beast::tcp_stream(std::move(socket)), *context), context, peer);
  } else {
    startSession(*this, beast::tcp_stream(std::move(socket)), nullptr, peer);
  }
}

void HttpServer::Impl::scheduleSummary() {
  summary_timer_.expires_after(kRefusalSummaryInterval);
  summary_timer_.async_wait([this](beast::error_code ec) {
    if (ec || stopped_) {
      return;
    }
    refusals_.summarize();
    scheduleSummary();
  });
}

void HttpServer::Impl::scheduleReload() {
  reload_timer_.expires_after(options_.reload_interval);
  reload_timer_.async_wait([this](beast::error_code ec) {
    if (ec || stopped_) {
      return;
    }
    reloadIfChanged();
    scheduleReload();
  });
}

void HttpServer::Impl::reloadIfChanged() {
  const FileStamp cert = stampOf(options_.cert_file);
  const FileStamp key = stampOf(options_.key_file);
  const FileStamp ca = stampOf(options_.client_ca_file);
  if (cert == cert_stamp_ && key == key_stamp_ && ca == ca_stamp_) {
    return;
  }
  auto context = loadTlsContext(options_);
  if (!context.ok()) {
    // A half-written pair (certificate renewed, key not yet) is retried on the next tick.
    spdlog::warn("TLS certificate changed but could not be loaded, keeping the previous one: {}",
                 context.status().message());
    if (options_.on_certificate_reload) {
      options_.on_certificate_reload(false);
    }
    return;
  }
  {
    std::lock_guard lock(context_mutex_);
    context_ = std::move(context).value();
  }
  cert_stamp_ = cert;
  key_stamp_ = key;
  ca_stamp_ = ca;
  spdlog::info("TLS certificate reloaded from {}", options_.cert_file);
  if (options_.on_certificate_reload) {
    options_.on_certificate_reload(true);
  }
}

Result<ListenAddress> parseListenAddress(std::string_view text) {
  if (text.empty() || text == "0") {
    return ListenAddress{"", -1};
  }
  std::string host;
  std::string_view port_text;
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return invalidArgument("\"" + std::string(text) + "\" is not host:port");
    }
    host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return invalidArgument("\"" + std::string(text) + "\" is not host:port (e.g. :8080)");
    }
    host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  if (host.empty()) {
    host = "0.0.0.0";
  } else if (host == "localhost") {
    host = "127.0.0.1";
  }
  int port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return invalidArgument("\"" + std::string(port_text) + "\" is not a port number");
  }
  return ListenAddress{host, port};
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::create(HttpServerOptions options,
                                                       HttpHandler handler) {
  auto impl = std::make_unique<Impl>(std::move(options), std::move(handler));
  KVC_RETURN_IF_ERROR(impl->listen());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

Result<std::unique_ptr<HttpServer>> HttpServer::create(const ListenAddress& address,
                                                       HttpHandler handler) {
  HttpServerOptions options;
  options.listen = address;
  return create(std::move(options), std::move(handler));
}

int HttpServer::port() const { return impl_->port(); }
std::string HttpServer::address() const { return impl_->address(); }
bool HttpServer::tls() const { return impl_->tls(); }
void HttpServer::start() { impl_->start(); }
void HttpServer::stop() {
  if (impl_) {
    impl_->stop();
  }
}

}  // namespace kvc::runtime
