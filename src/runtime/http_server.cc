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

namespace kvc::runtime {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

namespace {

constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
constexpr auto kDrainTimeout = std::chrono::seconds(2);
constexpr std::size_t kMaxDrainBytes = 64 * 1024 * 1024;

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

// A connection, as the server sees it: something stop() can close.
class Connection {
public:
  virtual ~Connection() = default;
  virtual void abort() = 0;
};

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
        acceptor_(control_),
        reload_timer_(control_) {}

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

  // A client whose TLS handshake failed (no certificate, an untrusted one, plain HTTP on the TLS
  // port): logged with who it was, at most one line a second (the rest counted in the next).
  void refusedHandshake(const std::string& peer, const beast::error_code& ec) {
    if (ec == asio::error::operation_aborted || ec == beast::error::timeout) {
      return;  // stopping, or a client that went quiet: nothing refused
    }
    std::lock_guard lock(refusals_mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_refusal_log_ < std::chrono::seconds(1)) {
      ++refusals_unlogged_;
      return;
    }
    spdlog::warn("http server {}: TLS handshake from {} refused: {}{}", address(),
                 peer.empty() ? "an unknown peer" : peer, ec.message(),
                 refusals_unlogged_ > 0
                     ? " (and " + std::to_string(refusals_unlogged_) + " more since the last line)"
                     : "");
    refusals_unlogged_ = 0;
    last_refusal_log_ = now;
  }

  // Remembers an open connection for closeAll(); drops the entries of the ones that ended.
  void track(const std::shared_ptr<Connection>& connection) {
    std::lock_guard lock(connections_mutex_);
    std::erase_if(connections_, [](const std::weak_ptr<Connection>& c) { return c.expired(); });
    connections_.insert(connection);
  }

private:
  void accept();
  void scheduleReload();
  void reloadIfChanged();

  void closeAll() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    reload_timer_.cancel();
    std::set<std::weak_ptr<Connection>, std::owner_less<std::weak_ptr<Connection>>> open;
    {
      std::lock_guard lock(connections_mutex_);
      open.swap(connections_);
    }
    for (const auto& weak : open) {
      if (auto connection = weak.lock()) {
        connection->abort();
      }
    }
  }

  std::shared_ptr<ssl::context> currentContext() const {
    std::lock_guard lock(context_mutex_);
    return context_;
  }

  HttpServerOptions options_;
  HttpHandler handler_;

  std::mutex connections_mutex_;
  std::set<std::weak_ptr<Connection>, std::owner_less<std::weak_ptr<Connection>>> connections_;

  std::mutex refusals_mutex_;
  std::chrono::steady_clock::time_point last_refusal_log_{};
  std::size_t refusals_unlogged_ = 0;

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
  std::vector<std::thread> threads_;
  std::atomic<bool> stopped_{false};
  int port_ = 0;
};

namespace {

// One keep-alive connection. `Stream` is a beast::tcp_stream or a TlsStream over one.
template <typename Stream>
class Session : public Connection, public std::enable_shared_from_this<Session<Stream>> {
public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Session(Stream stream, HttpServer::Impl& server, std::shared_ptr<ssl::context> context)
      : stream_(std::move(stream)), server_(server), context_(std::move(context)) {}

  void start() {
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(kHandshakeTimeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) {
                                  self->server_.refusedHandshake(self->peer(), ec);
                                  return;
                                }
                                self->peer_subject_ = peerSubject(self->stream_.native_handle());
                                self->read();
                              });
    } else {
      read();
    }
  }

  // Closes the connection on its own strand, where every other use of stream_ runs.
  void abort() override {
    asio::post(beast::get_lowest_layer(stream_).get_executor(), [self = this->shared_from_this()] {
      beast::error_code ignored;
      auto& socket = beast::get_lowest_layer(self->stream_).socket();
      socket.shutdown(tcp::socket::shutdown_both, ignored);
      socket.close(ignored);
    });
  }

private:
  void read() {
    parser_.emplace();
    parser_->body_limit(server_.options().max_body_bytes);
    beast::get_lowest_layer(stream_).expires_after(server_.options().idle_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->onRead(ec); });
  }

  void onRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream) {
      close();
      return;
    }
    if (ec == http::error::body_limit) {
      draining_ = true;  // answer, then read what the client still sends before closing
      respond({413, "text/plain; charset=utf-8", "request body too large\n"}, 11, false);
      return;
    }
    if (ec) {
      return;  // timeout, reset, truncated: nothing to answer
    }
    const auto& message = parser_->get();
    HttpServerRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.path = request.target.substr(0, request.target.find('?'));
    request.body = message.body();
    request.peer_common_name = peer_subject_.first;
    request.peer_organization = peer_subject_.second;
    request.peer_address = peer();
    for (const auto& field : message) {
      const auto name = field.name_string();
      request.headers[lowerCased({name.data(), name.size()})] = std::string(field.value());
    }
    respond(server_.dispatch(request), message.version(), message.keep_alive());
  }

  void respond(HttpServerResponse response, unsigned version, bool keep_alive) {
    auto reply = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), version);
    reply->set(http::field::server, "kvcache-operator");
    reply->set(http::field::content_type, response.content_type);
    reply->keep_alive(keep_alive);
    reply->body() = std::move(response.body);
    reply->prepare_payload();
    http::async_write(stream_, *reply,
                      [self = this->shared_from_this(), reply](beast::error_code ec, std::size_t) {
                        if (ec) {
                          return;
                        }
                        if (reply->keep_alive()) {
                          self->read();
                        } else if (self->draining_) {
                          self->drain();
                        } else {
                          self->close();
                        }
                      });
  }

  // Lingering close (as web servers do after an early answer): a client still sending the rest
  // of an oversized body would otherwise get a reset instead of reading the 413.
  void drain() {
    beast::get_lowest_layer(stream_).expires_after(kDrainTimeout);
    stream_.async_read_some(asio::buffer(scratch_),
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
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(5));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {});
    } else {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  // "ip:port" of the client, or "" once the socket is gone.
  std::string peer() const {
    beast::error_code ec;
    const auto endpoint = beast::get_lowest_layer(stream_).socket().remote_endpoint(ec);
    return ec ? std::string()
              : endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  }

  Stream stream_;
  HttpServer::Impl& server_;
  std::shared_ptr<ssl::context> context_;  // keeps the certificate this connection was given
  std::pair<std::string, std::string> peer_subject_;  // {common name, organization}
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool draining_ = false;
  std::size_t drained_ = 0;
  std::array<char, 16384> scratch_{};
};

template <typename Stream>
void startSession(HttpServer::Impl& server, Stream stream, std::shared_ptr<ssl::context> context) {
  auto session = std::make_shared<Session<Stream>>(std::move(stream), server, std::move(context));
  server.track(session);
  session->start();
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
    socket.set_option(tcp::no_delay(true), ec);
    if (tls()) {
      auto context = currentContext();
      startSession(*this, TlsStream(beast::tcp_stream(std::move(socket)), *context), context);
    } else {
      startSession(*this, beast::tcp_stream(std::move(socket)), nullptr);
    }
    accept();
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
