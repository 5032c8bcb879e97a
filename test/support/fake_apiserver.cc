#include "fake_apiserver.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <list>

namespace kvc::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string percentDecode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

const char* reasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Status";
  }
}

class SocketWriter final : public ResponseWriter {
public:
  SocketWriter(tcp::socket& socket, const std::atomic<bool>& stopping)
      : socket_(socket), stopping_(stopping) {}

  bool closed() override {
    if (!ok_ || stopping_) {
      return true;
    }
    pollfd p{socket_.native_handle(), POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) > 0) {
      if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
        return true;
      }
      char byte = 0;
      if ((p.revents & POLLIN) != 0 && ::recv(p.fd, &byte, 1, MSG_PEEK) == 0) {
        return true;
      }
    }
    return false;
  }

  void respond(int status, std::string_view body, std::string_view content_type,
               const std::vector<std::string>& extra_headers) override {
    std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reasonPhrase(status) +
                       "\r\nContent-Type: " + std::string(content_type) +
                       "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    for (const std::string& h : extra_headers) {
      head += h + "\r\n";
    }
    head += "\r\n";
    send(head);
    send(body);
    responded_ = true;
  }
  void startStream(int status) override {
    send("HTTP/1.1 " + std::to_string(status) + " " + reasonPhrase(status) +
         "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    responded_ = true;
  }
  bool write(std::string_view data) override {
    if (data.empty()) {
      return ok_;
    }
    char size[32];
    std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
    send(size);
    send(data);
    send("\r\n");
    return ok_;
  }
  void endStream() override { send("0\r\n\r\n"); }
  void abort() override {
    // Reset the connection (RST, no chunked terminator); the descriptor is closed later.
    linger hard{1, 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
    ::shutdown(socket_.native_handle(), SHUT_RDWR);
    ok_ = false;
    aborted_ = true;
  }

  bool responded() const { return responded_; }
  bool usable() const { return ok_ && !aborted_; }

private:
  void send(std::string_view data) {
    if (!ok_) {
      return;
    }
    beast::error_code ec;
    asio::write(socket_, asio::buffer(data.data(), data.size()), ec);
    if (ec) {
      ok_ = false;
    }
  }

  tcp::socket& socket_;
  const std::atomic<bool>& stopping_;
  bool ok_ = true;
  bool responded_ = false;
  bool aborted_ = false;
};

}  // namespace

struct FakeApiServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread accept_thread;
  std::atomic<bool> stopping{false};
  mutable std::mutex mutex;
  FakeHandler handler;
  std::vector<FakeRequest> requests;
  struct Connection {
    std::shared_ptr<tcp::socket> socket;
    int fd;  // read once at accept, so stop() never touches the socket object
    std::thread thread;
  };
  std::list<Connection> connections;

  void serve(const std::shared_ptr<tcp::socket>& socket) {
    beast::flat_buffer buffer;
    while (!stopping) {
      http::request<http::string_body> req;
      beast::error_code ec;
      http::read(*socket, buffer, req, ec);
      if (ec) {
        break;
      }
      FakeRequest fr;
      fr.method = std::string(req.method_string());
      fr.target = std::string(req.target());
      const auto q = fr.target.find('?');
      fr.path = fr.target.substr(0, q);
      if (q != std::string::npos) {
        std::string_view query = std::string_view(fr.target).substr(q + 1);
        while (!query.empty()) {
          const auto amp = query.find('&');
          std::string_view pair = query.substr(0, amp);
          const auto eq = pair.find('=');
          fr.query[percentDecode(pair.substr(0, eq))] =
              eq == std::string_view::npos ? std::string() : percentDecode(pair.substr(eq + 1));
          if (amp == std::string_view::npos) {
            break;
          }
          query.remove_prefix(amp + 1);
        }
      }
      for (const auto& field : req) {
        std::string name(field.name_string());
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        fr.headers[name] = std::string(field.value());
      }
      fr.body = req.body();
      FakeHandler h;
      {
        std::lock_guard<std::mutex> guard(mutex);
        requests.push_back(fr);
        h = handler;
      }
      SocketWriter writer(*socket, stopping);
      if (h) {
        h(fr, writer);
      }
      if (!writer.responded()) {
        static_cast<ResponseWriter&>(writer).respond(
            404, statusBody(404, "NotFound", "no handler for " + fr.path));
      }
      if (!writer.usable() || !req.keep_alive()) {
        break;
      }
    }
    // Shut down but do not close: the descriptor stays valid (and unreused) until stop()
    // has joined this thread and the socket object is destroyed.
    ::shutdown(socket->native_handle(), SHUT_RDWR);
  }
};

FakeApiServer::FakeApiServer() : impl_(std::make_unique<Impl>()) {
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->accept_thread = std::thread([impl = impl_.get()] {
    while (!impl->stopping) {
      auto socket = std::make_shared<tcp::socket>(impl->io);
      beast::error_code ec;
      impl->acceptor.accept(*socket, ec);
      if (ec || impl->stopping) {
        break;
      }
      // An answer is written as a header and a body: without TCP_NODELAY the body waits for the
      // client's delayed ACK (about 40 ms a request).
      socket->set_option(tcp::no_delay(true), ec);
      const int fd = socket->native_handle();
      std::lock_guard<std::mutex> guard(impl->mutex);
      impl->connections.push_back(
          Impl::Connection{socket, fd, std::thread([impl, socket] { impl->serve(socket); })});
    }
  });
}

FakeApiServer::~FakeApiServer() { stop(); }

void FakeApiServer::stop() {
  if (impl_->stopping.exchange(true)) {
    return;
  }
  // Wake the blocking accept with a connection of our own.
  {
    asio::io_context io;
    tcp::socket poke(io);
    beast::error_code ec;
    poke.connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)), ec);
  }
  impl_->accept_thread.join();
  std::list<Impl::Connection> connections;
  {
    std::lock_guard<std::mutex> guard(impl_->mutex);
    connections.swap(impl_->connections);
  }
  // Wake connection threads blocked in a read: shut the descriptors down at the OS level
  // (asio's own shutdown would touch socket state those threads are using).
  for (Impl::Connection& c : connections) {
    ::shutdown(c.fd, SHUT_RDWR);
  }
  for (Impl::Connection& c : connections) {
    c.thread.join();
  }
  beast::error_code ec;
  impl_->acceptor.close(ec);
}

void FakeApiServer::setHandler(FakeHandler handler) {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  impl_->handler = std::move(handler);
}

std::string FakeApiServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

kube::Config FakeApiServer::config(std::string token) const {
  kube::Config c;
  c.server = url();
  c.bearer_token = std::move(token);
  c.timeout = std::chrono::milliseconds(5000);
  return c;
}

std::vector<FakeRequest> FakeApiServer::requests() const {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  return impl_->requests;
}

std::size_t FakeApiServer::requestCount() const {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  return impl_->requests.size();
}

std::string statusBody(int code, std::string_view reason, std::string_view message) {
  Json status = {{"kind", "Status"},
                 {"apiVersion", "v1"},
                 {"metadata", Json::object()},
                 {"status", "Failure"},
                 {"message", std::string(message)},
                 {"reason", std::string(reason)},
                 {"code", code}};
  return status.dump();
}

FakeResourceServer::FakeResourceServer(std::string collection_path, std::string api_version,
                                       std::string kind)
    : collection_path_(std::move(collection_path)),
      api_version_(std::move(api_version)),
      kind_(std::move(kind)) {}

FakeResourceServer::~FakeResourceServer() {
  // Handlers still running on server threads must leave before the members go away.
  std::unique_lock<std::mutex> lock(mutex_);
  stopping_ = true;
  cv_.notify_all();
  cv_.wait_for(lock, std::chrono::seconds(10), [this] { return active_ == 0; });
}

Json FakeResourceServer::bump(Json object) {
  ++rv_;
  object["apiVersion"] = api_version_;
  object["kind"] = kind_;
  object["metadata"]["resourceVersion"] = std::to_string(rv_);
  return object;
}

Json FakeResourceServer::create(Json object) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!object["metadata"].contains("uid")) {
    object["metadata"]["uid"] = "uid-" + object["metadata"]["name"].get<std::string>();
  }
  object = bump(std::move(object));
  const std::string name = object["metadata"]["name"].get<std::string>();
  objects_[name] = object;
  events_.push_back(Event{rv_, "ADDED", object});
  cv_.notify_all();
  return object;
}

Json FakeResourceServer::update(Json object) {
  std::lock_guard<std::mutex> guard(mutex_);
  object = bump(std::move(object));
  const std::string name = object["metadata"]["name"].get<std::string>();
  objects_[name] = object;
  events_.push_back(Event{rv_, "MODIFIED", object});
  cv_.notify_all();
  return object;
}

void FakeResourceServer::remove(const std::string& name, std::optional<Json> final_state) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = objects_.find(name);
  if (it == objects_.end()) {
    return;
  }
  Json object = bump(final_state ? std::move(*final_state) : it->second);
  objects_.erase(it);
  events_.push_back(Event{rv_, "DELETED", object});
  cv_.notify_all();
}

void FakeResourceServer::compact() {
  std::lock_guard<std::mutex> guard(mutex_);
  compacted_ = rv_;
  events_.clear();
}

void FakeResourceServer::bookmark() {
  std::lock_guard<std::mutex> guard(mutex_);
  ++bookmark_generation_;
  cv_.notify_all();
}

void FakeResourceServer::closeWatches() {
  std::lock_guard<std::mutex> guard(mutex_);
  ++close_generation_;
  cv_.notify_all();
}

void FakeResourceServer::abortWatches() {
  std::lock_guard<std::mutex> guard(mutex_);
  ++abort_generation_;
  cv_.notify_all();
}

void FakeResourceServer::holdWatches(bool hold) {
  std::lock_guard<std::mutex> guard(mutex_);
  hold_watches_ = hold;
  cv_.notify_all();
}

void FakeResourceServer::failLists(int n, int status) {
  std::lock_guard<std::mutex> guard(mutex_);
  fail_lists_ = n;
  fail_lists_status_ = status;
}

void FakeResourceServer::failWatches(int n, int status) {
  std::lock_guard<std::mutex> guard(mutex_);
  fail_watches_ = n;
  fail_watches_status_ = status;
}

std::int64_t FakeResourceServer::resourceVersion() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return rv_;
}

int FakeResourceServer::listCalls() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return list_calls_;
}

int FakeResourceServer::watchCalls() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return watch_calls_;
}

int FakeResourceServer::openWatches() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return open_watches_;
}

bool FakeResourceServer::waitForOpenWatches(int n) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, std::chrono::seconds(5), [&] { return open_watches_ >= n; });
}

bool FakeResourceServer::waitForWatchCalls(int n) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, std::chrono::seconds(5), [&] { return watch_calls_ >= n; });
}

void FakeResourceServer::handle(const FakeRequest& request, ResponseWriter& out) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (stopping_) {
      out.respond(503, statusBody(503, "ServiceUnavailable", "shutting down"));
      return;
    }
    ++active_;
  }
  handleActive(request, out);
  std::lock_guard<std::mutex> guard(mutex_);
  --active_;
  cv_.notify_all();
}

void FakeResourceServer::handleActive(const FakeRequest& request, ResponseWriter& out) {
  if (request.path != collection_path_ || request.method != "GET") {
    out.respond(404, statusBody(404, "NotFound", request.path + " not found"));
    return;
  }
  if (request.param("watch") == "true") {
    watch(request, out);
  } else {
    list(request, out);
  }
}

void FakeResourceServer::list(const FakeRequest& request, ResponseWriter& out) {
  std::unique_lock<std::mutex> lock(mutex_);
  ++list_calls_;
  if (fail_lists_ > 0) {
    --fail_lists_;
    const int status = fail_lists_status_;
    lock.unlock();
    out.respond(status, statusBody(status, status == 410 ? "Expired" : "InternalError",
                                   "injected list failure"));
    return;
  }
  std::int64_t limit = 0;
  if (!request.param("limit").empty()) {
    limit = std::stoll(request.param("limit"));
  }
  std::string start_after;
  std::int64_t list_rv = rv_;
  const std::string token = request.param("continue");
  if (!token.empty()) {
    const auto bar = token.find('|');
    list_rv = std::stoll(token.substr(0, bar));
    start_after = token.substr(bar + 1);
    if (list_rv < compacted_) {
      lock.unlock();
      out.respond(410, statusBody(410, "Expired", "The provided continue parameter is too old"));
      return;
    }
  }
  Json items = Json::array();
  std::string next;
  auto it = start_after.empty() ? objects_.begin() : objects_.upper_bound(start_after);
  for (; it != objects_.end(); ++it) {
    if (limit > 0 && static_cast<std::int64_t>(items.size()) == limit) {
      next = std::to_string(list_rv) + "|" + std::prev(it)->first;
      break;
    }
    Json item = it->second;
    item.erase("apiVersion");  // as typed lists do
    item.erase("kind");
    items.push_back(std::move(item));
  }
  Json list = {{"apiVersion", api_version_},
               {"kind", kind_ + "List"},
               {"metadata", {{"resourceVersion", std::to_string(list_rv)}}},
               {"items", std::move(items)}};
  if (!next.empty()) {
    list["metadata"]["continue"] = next;
  }
  lock.unlock();
  out.respond(200, list.dump());
}

void FakeResourceServer::watch(const FakeRequest& request, ResponseWriter& out) {
  std::unique_lock<std::mutex> lock(mutex_);
  ++watch_calls_;
  cv_.notify_all();
  cv_.wait(lock, [this] { return !hold_watches_ || stopping_; });
  if (fail_watches_ > 0) {
    --fail_watches_;
    const int status = fail_watches_status_;
    lock.unlock();
    out.respond(
        status,
        statusBody(status, status == 410 ? "Expired" : "InternalError", "injected watch failure"),
        "application/json",
        status == 429 ? std::vector<std::string>{"Retry-After: 1"} : std::vector<std::string>{});
    return;
  }
  std::int64_t from = rv_;
  if (!request.param("resourceVersion").empty()) {
    from = std::stoll(request.param("resourceVersion"));
  }
  const std::int64_t timeout_seconds =
      request.param("timeoutSeconds").empty() ? 60 : std::stoll(request.param("timeoutSeconds"));
  const bool bookmarks = request.param("allowWatchBookmarks") == "true";
  out.startStream(200);
  if (from < compacted_) {
    Json error = {
        {"type", "ERROR"},
        {"object", Json::parse(statusBody(410, "Expired",
                                          "too old resource version: " + std::to_string(from) +
                                              " (" + std::to_string(compacted_) + ")"))}};
    lock.unlock();
    out.write(error.dump() + "\n");
    out.endStream();
    return;
  }
  ++open_watches_;
  cv_.notify_all();
  const std::uint64_t close_gen = close_generation_;
  const std::uint64_t abort_gen = abort_generation_;
  std::uint64_t bookmark_gen = bookmark_generation_;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  std::int64_t sent = from;
  bool alive = true;
  bool aborted = false;
  while (alive) {
    // Events after `sent`, in order.
    std::vector<std::string> lines;
    for (const Event& e : events_) {
      if (e.rv > sent) {
        lines.push_back(Json{{"type", e.type}, {"object", e.object}}.dump() + "\n");
        sent = e.rv;
      }
    }
    if (bookmarks && bookmark_generation_ != bookmark_gen) {
      bookmark_gen = bookmark_generation_;
      lines.push_back(Json{{"type", "BOOKMARK"},
                           {"object",
                            {{"apiVersion", api_version_},
                             {"kind", kind_},
                             {"metadata", {{"resourceVersion", std::to_string(rv_)}}}}}}
                          .dump() +
                      "\n");
    }
    if (!lines.empty()) {
      lock.unlock();
      for (const std::string& line : lines) {
        // Split every event in two chunks, so clients must reassemble lines.
        const std::size_t half = line.size() / 2;
        alive = out.write(std::string_view(line).substr(0, half)) &&
                out.write(std::string_view(line).substr(half));
        if (!alive) {
          break;
        }
      }
      lock.lock();
      continue;
    }
    if (stopping_ || close_generation_ != close_gen || out.closed()) {
      break;
    }
    if (abort_generation_ != abort_gen) {
      aborted = true;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      break;
    }
    cv_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                std::chrono::milliseconds(100)));
  }
  --open_watches_;
  cv_.notify_all();
  lock.unlock();
  if (aborted) {
    out.abort();
  } else if (alive) {
    out.endStream();
  }
}

FakeHandler serveObjects(std::map<std::string, Json> objects_by_path) {
  return [objects = std::move(objects_by_path)](const FakeRequest& r, ResponseWriter& out) {
    auto it = objects.find(r.path);
    if (it == objects.end()) {
      out.respond(404, statusBody(404, "NotFound", r.path + " not found"));
      return;
    }
    out.respond(200, it->second.dump());
  };
}

FakeHandler answerWith(int code, std::string body) {
  return [code, body = std::move(body)](const FakeRequest&, ResponseWriter& out) {
    out.respond(code, body);
  };
}

FakeHandler answerStatus(int code, std::string_view reason, std::string_view message) {
  return answerWith(code, statusBody(code, reason, message));
}

}  // namespace kvc::testing
