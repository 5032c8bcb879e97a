#include "kvc/runtime/http_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <mutex>
#include <set>
#include <thread>

namespace kvc::runtime {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::size_t kMaxBody = 64 * 1024;
constexpr auto kIdleTimeout = std::chrono::seconds(10);

class Session;

struct Shared {
  HttpHandler handler;
  std::mutex mutex;
  std::set<std::shared_ptr<Session>> sessions;
};

class Session : public std::enable_shared_from_this<Session> {
public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {}

  void run() { read(); }
  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

private:
  void read() {
    parser_.emplace();
    parser_->body_limit(kMaxBody);
    stream_.expires_after(kIdleTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->onRead(ec);
                     });
  }

  void onRead(beast::error_code ec) {
    if (ec) {
      finish();
      return;
    }
    const auto& req = parser_->get();
    HttpServerRequest request;
    request.method = std::string(req.method_string());
    request.target = std::string(req.target());
    request.path = request.target.substr(0, request.target.find('?'));
    request.body = req.body();
    for (const auto& field : req) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      request.headers[name] = std::string(field.value());
    }
    HttpServerResponse answer;
    try {
      answer = shared_->handler(request);
    } catch (const std::exception& e) {
      answer = HttpServerResponse{500, "text/plain; charset=utf-8",
                                  std::string("internal error: ") + e.what() + "\n"};
    }
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(answer.status), req.version());
    res->set(http::field::server, "kvcache-operator");
    res->set(http::field::content_type, answer.content_type);
    res->keep_alive(req.keep_alive());
    res->body() = std::move(answer.body);
    res->prepare_payload();
    const bool keep = res->keep_alive();
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res, keep](beast::error_code wec, std::size_t) {
                        if (wec || !keep) {
                          self->close();
                          self->finish();
                          return;
                        }
                        self->read();
                      });
  }

  void finish() {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    shared_->sessions.erase(shared_from_this());
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<Shared> shared_;
};

// HttpServer
class BeastServer final : public HttpServer {
public:
  BeastServer(std::shared_ptr<Shared> shared, std::string host)
      : shared_(std::move(shared)), host_(std::move(host)), acceptor_(io_) {}
  ~BeastServer() override { stop(); }

  Status bind(const ListenAddress& address) {
    beast::error_code ec;
    const auto ip = asio::ip::make_address(address.host, ec);
    if (ec) {
      return invalidArgument("\"" + address.host + "\" is not an IP address");
    }
    const tcp::endpoint endpoint(ip, static_cast<unsigned short>(address.port));
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
      return unavailable("cannot listen on " + address.host + ":" +
                         std::to_string(address.port) + ": " + ec.message());
    }
    port_ = acceptor_.local_endpoint().port();
    return okStatus();
  }

  int port() const override { return port_; }
  std::string address() const override {
    return (host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_) + ":" +
           std::to_string(port_);
  }

  void start() override {
    if (thread_.joinable()) {
      return;
    }
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }

  void stop() override {
    if (stopped_.exchange(true)) {
      return;
    }
    if (thread_.joinable()) {
      // Closing the listener and every connection leaves io_ without work, so run() returns.
      asio::post(io_, [this] { closeAll(); });
      thread_.join();
    } else {
      closeAll();
    }
    std::lock_guard<std::mutex> guard(shared_->mutex);
    shared_->sessions.clear();
  }

private:
  void closeAll() {
    beast::error_code ec;
    acceptor_.close(ec);
    std::set<std::shared_ptr<Session>> sessions;
    {
      std::lock_guard<std::mutex> guard(shared_->mutex);
      sessions.swap(shared_->sessions);
    }
    for (const auto& session : sessions) {
      session->close();
    }
  }

  void accept() {
    acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code ec,
                                                          tcp::socket socket) {
      if (ec) {
        if (ec != asio::error::operation_aborted) {
          spdlog::warn("http server {}: accept failed: {}", address(), ec.message());
        }
        if (!acceptor_.is_open()) {
          return;
        }
      } else {
        auto session = std::make_shared<Session>(std::move(socket), shared_);
        {
          std::lock_guard<std::mutex> guard(shared_->mutex);
          shared_->sessions.insert(session);
        }
        session->run();
      }
      accept();
    });
  }

  std::shared_ptr<Shared> shared_;
  std::string host_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

}  // namespace

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
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(),
                                         port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 ||
      port > 65535) {
    return invalidArgument("\"" + std::string(port_text) + "\" is not a port number");
  }
  return ListenAddress{host, port};
}

Result<std::unique_ptr<HttpServer>> HttpServer::create(const ListenAddress& address,
                                                       HttpHandler handler) {
  auto shared = std::make_shared<Shared>();
  shared->handler = std::move(handler);
  auto server = std::make_unique<BeastServer>(shared, address.host);
  KVC_RETURN_IF_ERROR(server->bind(address));
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace kvc::runtime
