#include "kvc/webhook/server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <array>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace kvc::webhook {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

// What identifies a version of the certificate files on disk.
struct FileStamp {
  long long mtimeNs = 0;
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

Result<std::shared_ptr<ssl::context>> loadTlsContext(const std::string& certFile,
                                                     const std::string& keyFile) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                       ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  boost::system::error_code ec;
  context->use_certificate_chain_file(certFile, ec);
  if (ec) {
    return invalidArgument("TLS certificate " + certFile + ": " + ec.message());
  }
  context->use_private_key_file(keyFile, ssl::context::pem, ec);
  if (ec) {
    return invalidArgument("TLS key " + keyFile + ": " + ec.message());
  }
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return invalidArgument("TLS key " + keyFile + " does not match certificate " + certFile);
  }
  return context;
}

}  // namespace

class HttpsServer::Impl {
public:
  Impl(Options options, std::map<std::string, HttpHandler> routes, runtime::Registry* metrics)
      : options_(std::move(options)), routes_(std::move(routes)), metrics_(metrics),
        acceptor_(io_), reloadTimer_(io_) {}

  Status listen() {
    if (options_.certFile.empty() != options_.keyFile.empty()) {
      return invalidArgument("a TLS certificate and key are given together, or neither");
    }
    if (tls()) {
      KVC_ASSIGN_OR_RETURN(auto context, loadTlsContext(options_.certFile, options_.keyFile));
      context_ = std::move(context);
      certStamp_ = stampOf(options_.certFile);
      keyStamp_ = stampOf(options_.keyFile);
    }
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(options_.address, ec);
    if (ec) {
      return invalidArgument("listen address " + options_.address + ": " + ec.message());
    }
    const tcp::endpoint endpoint(address, options_.port);
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
      return unavailable("listening on " + options_.address + ":" +
                         std::to_string(options_.port) + ": " + ec.message());
    }
    port_ = acceptor_.local_endpoint().port();
    return okStatus();
  }

  void run() {
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
    asio::post(io_, [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      reloadTimer_.cancel();
    });
    io_.stop();
    for (std::thread& thread : threads_) {
      if (thread.joinable()) {
        thread.join();
      }
    }
  }

  bool tls() const { return !options_.certFile.empty(); }
  unsigned short port() const { return port_; }
  bool certificateLoaded() const {
    std::lock_guard lock(contextMutex_);
    return !tls() || context_ != nullptr;
  }

  std::shared_ptr<ssl::context> currentContext() const {
    std::lock_guard lock(contextMutex_);
    return context_;
  }

  HttpResponse dispatch(const HttpRequest& request) const {
    auto it = routes_.find(request.path);
    if (it == routes_.end()) {
      return {404, "text/plain", "not found\n"};
    }
    try {
      return it->second(request);
    } catch (const std::exception& e) {
      spdlog::error("handler for {} threw: {}", request.path, e.what());
      return {500, "text/plain", "internal error\n"};
    }
  }

  const Options& options() const { return options_; }

private:
  void accept();
  void scheduleReload();
  void reloadIfChanged();
  void countReload(const std::string& result) {
    if (metrics_ != nullptr) {
      metrics_
          ->counter("kvcache_webhook_certificate_reloads_total",
                    "Certificate reloads after the files changed on disk, by result.", {"result"})
          .with({result})
          .inc();
    }
  }

  Options options_;
  std::map<std::string, HttpHandler> routes_;
  runtime::Registry* metrics_;  // may be null
  asio::io_context io_;
  tcp::acceptor acceptor_;
  asio::steady_timer reloadTimer_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopped_{false};
  unsigned short port_ = 0;

  mutable std::mutex contextMutex_;
  std::shared_ptr<ssl::context> context_;
  FileStamp certStamp_;
  FileStamp keyStamp_;
};

namespace {

// One keep-alive connection. `Stream` is a beast::tcp_stream or an ssl_stream over one.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
public:
  Session(Stream stream, const HttpsServer::Impl& server, std::shared_ptr<ssl::context> context)
      : stream_(std::move(stream)), server_(server), context_(std::move(context)) {}

  void start() {
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(10));
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (!ec) {
                                  self->read();
                                }
                              });
    } else {
      read();
    }
  }

private:
  void read() {
    parser_.emplace();
    parser_->body_limit(server_.options().maxBodyBytes);
    beast::get_lowest_layer(stream_).expires_after(server_.options().idleTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       self->onRead(ec);
                     });
  }

  void onRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream) {
      close();
      return;
    }
    if (ec == http::error::body_limit) {
      draining_ = true;  // answer, then read what the client still sends before closing
      respond({413, "text/plain", "request body too large\n"}, false);
      return;
    }
    if (ec) {
      return;  // timeout, reset, truncated: nothing to answer
    }
    const auto& message = parser_->get();
    HttpRequest request;
    request.method = std::string(message.method_string());
    const std::string target(message.target());
    request.path = target.substr(0, target.find('?'));
    request.contentType = std::string(message[http::field::content_type]);
    request.body = message.body();
    respond(server_.dispatch(request), message.keep_alive());
  }

  void respond(HttpResponse response, bool keepAlive) {
    auto reply = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), 11);
    reply->set(http::field::server, "kvcache");
    reply->set(http::field::content_type, response.contentType);
    reply->keep_alive(keepAlive);
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
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(2));
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
    beast::error_code ignored;
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(5));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {});
    } else {
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  Stream stream_;
  const HttpsServer::Impl& server_;
  std::shared_ptr<ssl::context> context_;  // keeps the certificate this connection was given
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  static constexpr std::size_t kMaxDrainBytes = 64 * 1024 * 1024;
  bool draining_ = false;
  std::size_t drained_ = 0;
  std::array<char, 16384> scratch_{};
};

}  // namespace

void HttpsServer::Impl::accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (!stopped_) {
        accept();
      }
      return;
    }
    socket.set_option(tcp::no_delay(true), ec);
    if (tls()) {
      auto context = currentContext();
      auto session = std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
          beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *context),
          *this, context);
      session->start();
    } else {
      std::make_shared<Session<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), *this,
                                                   nullptr)
          ->start();
    }
    accept();
  });
}

void HttpsServer::Impl::scheduleReload() {
  reloadTimer_.expires_after(options_.reloadInterval);
  reloadTimer_.async_wait([this](beast::error_code ec) {
    if (ec || stopped_) {
      return;
    }
    reloadIfChanged();
    scheduleReload();
  });
}

void HttpsServer::Impl::reloadIfChanged() {
  const FileStamp cert = stampOf(options_.certFile);
  const FileStamp key = stampOf(options_.keyFile);
  if (cert == certStamp_ && key == keyStamp_) {
    return;
  }
  auto context = loadTlsContext(options_.certFile, options_.keyFile);
  if (!context.ok()) {
    // A half-written pair (certificate renewed, key not yet) is retried on the next tick.
    spdlog::warn("TLS certificate changed but could not be loaded, keeping the previous one: {}",
                 context.status().message());
    countReload("failure");
    return;
  }
  {
    std::lock_guard lock(contextMutex_);
    context_ = std::move(context).value();
  }
  certStamp_ = cert;
  keyStamp_ = key;
  spdlog::info("TLS certificate reloaded from {}", options_.certFile);
  countReload("success");
}

HttpsServer::HttpsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpsServer::~HttpsServer() { stop(); }

Result<std::unique_ptr<HttpsServer>> HttpsServer::start(Options options,
                                                        std::map<std::string, HttpHandler> routes,
                                                        runtime::Registry* metrics) {
  auto impl = std::make_unique<Impl>(std::move(options), std::move(routes), metrics);
  KVC_RETURN_IF_ERROR(impl->listen());
  impl->run();
  return std::unique_ptr<HttpsServer>(new HttpsServer(std::move(impl)));
}

unsigned short HttpsServer::port() const { return impl_->port(); }
bool HttpsServer::tls() const { return impl_->tls(); }
bool HttpsServer::certificateLoaded() const { return impl_->certificateLoaded(); }
void HttpsServer::stop() {
  if (impl_) {
    impl_->stop();
  }
}

}  // namespace kvc::webhook
