// The HTTP server over plain HTTP (port 0) and the Prometheus text rendering; TLS and
// certificate reload are tested with the webhooks' routes in test/unit/webhook/server_test.cc.
#include "kvc/runtime/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kvc/kube/client.h"
#include "kvc/runtime/metrics.h"

namespace kvc::runtime {
namespace {

// GET over the kube client's own transport (plain HTTP to 127.0.0.1).
std::pair<int, std::string> get(int port, const std::string& path) {
  kube::Config config;
  config.server = "http://127.0.0.1:" + std::to_string(port);
  auto client = kube::Client::create(config);
  EXPECT_TRUE(client.ok());
  kube::HttpRequest request;
  request.method = "GET";
  request.url = path;
  auto answer = (*client)->send(request);
  if (answer.ok()) {
    return {answer->status, answer->body};
  }
  return {answer.error().httpStatus(), answer.error().message()};
}

TEST(ListenAddressTest, ParsesTheUsualForms) {
  auto a = parseListenAddress("127.0.0.1:8081");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8081);
  EXPECT_EQ(parseListenAddress(":9090")->host, "0.0.0.0");
  EXPECT_EQ(parseListenAddress("localhost:1")->host, "127.0.0.1");
  EXPECT_EQ(parseListenAddress("[::1]:80")->host, "::1");
  EXPECT_EQ(parseListenAddress("0")->port, -1);
  EXPECT_FALSE(parseListenAddress("8080").ok());
  EXPECT_FALSE(parseListenAddress("h:99999").ok());
}

TEST(HttpServerTest, ServesTheHandlersAnswersOnAnEphemeralPort) {
  auto server = HttpServer::create(ListenAddress{"127.0.0.1", 0}, [](const HttpServerRequest& r) {
    if (r.path == "/healthz") {
      return HttpServerResponse{200, "text/plain", "ok\n"};
    }
    return HttpServerResponse{404, "text/plain", "not found: " + r.target + "\n"};
  });
  ASSERT_TRUE(server.ok()) << server.status().toString();
  (*server)->start();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);
  EXPECT_EQ(get(port, "/healthz"), std::make_pair(200, std::string("ok\n")));
  EXPECT_EQ(get(port, "/nope?x=1").first, 404);
  // Keep-alive reuse and many requests in a row.
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(get(port, "/healthz").first, 200);
  }
  (*server)->stop();
  EXPECT_EQ(get(port, "/healthz").first, 0);  // nothing listens any more
}

// A raw keep-alive connection: one request written, the answer read.
class RawConnection {
public:
  // From `from` (any 127.0.0.0/8 address: a second peer for the per-address cap).
  explicit RawConnection(int port, const char* from = "127.0.0.1")
      : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &local.sin_addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  void send(const std::string& text) {
    ASSERT_EQ(::write(fd_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  // Writes what the socket takes (a peer that closed takes nothing).
  void trySend(const std::string& text) {
    [[maybe_unused]] auto n = ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL);
  }
  // What arrives until the peer closes or `timeout` passes.
  std::string receive(std::chrono::milliseconds timeout) {
    timeval tv{0, static_cast<suseconds_t>(timeout.count() * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::string out;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
      if (n <= 0) {
        closed_ = n == 0;
        return out;
      }
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }
  // The status line of the next answer, as soon as it is here; "" when the peer closes first.
  std::string statusLine(std::chrono::milliseconds timeout) {
    timeval tv{0, static_cast<suseconds_t>(timeout.count() * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::string out;
    char c = 0;
    while (out.size() < 2 || out.compare(out.size() - 2, 2, "\r\n") != 0) {
      const ssize_t n = ::read(fd_, &c, 1);
      if (n <= 0) {
        closed_ = n == 0;
        return "";
      }
      out.push_back(c);
    }
    return out.substr(0, out.size() - 2);
  }
  bool closedByPeer() const { return closed_; }
  void finishSending() { ::shutdown(fd_, SHUT_WR); }

private:
  int fd_;
  bool connected_ = false;
  bool closed_ = false;
};

TEST(HttpServerTest, StopClosesEstablishedKeepAliveConnections) {
  auto server = HttpServer::create(ListenAddress{"127.0.0.1", 0}, [](const HttpServerRequest&) {
    return HttpServerResponse{200, "text/plain", "ok\n"};
  });
  ASSERT_TRUE(server.ok());
  (*server)->start();
  RawConnection connection((*server)->port());
  ASSERT_TRUE(connection.connected());
  connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string answer = connection.receive(std::chrono::milliseconds(300));
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  EXPECT_FALSE(connection.closedByPeer());  // kept alive
  (*server)->stop();
  EXPECT_EQ(connection.receive(std::chrono::milliseconds(2000)), "");
  EXPECT_TRUE(connection.closedByPeer());
}

TEST(HttpServerTest, AnswersAnOversizedBody413AndAThrowingHandler500) {
  HttpServerOptions options;
  options.max_body_bytes = 16;
  auto server = HttpServer::create(options, [](const HttpServerRequest& r) -> HttpServerResponse {
    if (r.path == "/throw") {
      throw std::runtime_error("boom");
    }
    return {200, "text/plain", r.header("x-echo")};
  });
  ASSERT_TRUE(server.ok());
  (*server)->start();
  {
    RawConnection connection((*server)->port());
    connection.send("GET /echo HTTP/1.1\r\nHost: x\r\nX-Echo: hello\r\n\r\n");
    const std::string answer = connection.receive(std::chrono::milliseconds(300));
    EXPECT_NE(answer.find("\r\n\r\nhello"), std::string::npos) << answer;
  }
  {
    RawConnection connection((*server)->port());
    connection.send("GET /throw HTTP/1.1\r\nHost: x\r\n\r\n");
    const std::string answer = connection.receive(std::chrono::milliseconds(300));
    EXPECT_EQ(answer.rfind("HTTP/1.1 500", 0), 0u) << answer;
    EXPECT_EQ(answer.find("boom"), std::string::npos) << "no internals in the answer";
  }
  {
    RawConnection connection((*server)->port());
    connection.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 64\r\n\r\n" +
                    std::string(64, 'a'));
    connection.finishSending();  // the server's lingering close then ends at once
    const std::string answer = connection.receive(std::chrono::milliseconds(3000));
    EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
    EXPECT_TRUE(connection.closedByPeer());
  }
}

TEST(HttpServerTest, RoutesByExactPath) {
  HttpHandler handler = routeByPath({{"/a", [](const HttpServerRequest&) {
                                        return HttpServerResponse{200, "text/plain", "a"};
                                      }}});
  HttpServerRequest request;
  request.path = "/a";
  EXPECT_EQ(handler(request).body, "a");
  request.path = "/a/b";
  EXPECT_EQ(handler(request).status, 404);
}

TEST(HttpServerTest, ABusyPortIsAnError) {
  auto first = HttpServer::create(ListenAddress{"127.0.0.1", 0},
                                  [](const HttpServerRequest&) { return HttpServerResponse{}; });
  ASSERT_TRUE(first.ok());
  auto second = HttpServer::create(ListenAddress{"127.0.0.1", (*first)->port()},
                                   [](const HttpServerRequest&) { return HttpServerResponse{}; });
  EXPECT_FALSE(second.ok());
}

TEST(MetricsTest, RendersCountersGaugesHistogramsAndCollectors) {
  Registry registry;
  registry.counter("requests_total", "Requests", {"code"}).with({"200"}).inc(3);
  registry.gauge("leader", "Leader", {"name"}).with({"a\"b"}).set(1);
  auto& h = registry.histogram("latency_seconds", "Latency", {}, {0.1, 1});
  h.with({}).observe(0.05);
  h.with({}).observe(0.5);
  h.with({}).observe(5);
  registry.addCollector([](MetricWriter& w) {
    w.family("depth", "Depth", "gauge");
    w.sample("depth", {{"name", "q"}}, 4);
  });
  const std::string text = registry.render();
  EXPECT_NE(text.find("# TYPE requests_total counter\nrequests_total{code=\"200\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("leader{name=\"a\\\"b\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_bucket{le=\"0.1\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_bucket{le=\"1\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_sum 5.55\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_count 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("depth{name=\"q\"} 4\n"), std::string::npos) << text;
}

TEST(MetricsTest, CollectorsSharingAFamilyGetOneHeaderAndGroupedSamples) {
  Registry registry;
  for (const char* queue : {"a", "b"}) {  // as two controllers each report their work queue
    registry.addCollector([queue](MetricWriter& w) {
      w.family("workqueue_depth", "Depth", "gauge");
      w.sample("workqueue_depth", {{"name", queue}}, 1);
      w.family("workqueue_adds_total", "Adds", "counter");
      w.sample("workqueue_adds_total", {{"name", queue}}, 2);
    });
  }
  EXPECT_EQ(registry.render(),
            "# HELP workqueue_depth Depth\n# TYPE workqueue_depth gauge\n"
            "workqueue_depth{name=\"a\"} 1\nworkqueue_depth{name=\"b\"} 1\n"
            "# HELP workqueue_adds_total Adds\n# TYPE workqueue_adds_total counter\n"
            "workqueue_adds_total{name=\"a\"} 2\nworkqueue_adds_total{name=\"b\"} 2\n");
}

}  // namespace
}  // namespace kvc::runtime

namespace kvc::runtime {
namespace {

using std::chrono::milliseconds;

// A plain server with small limits, counting its refusals by reason.
class LimitsTest : public testing::Test {
protected:
  void start(HttpServerOptions options) {
    options.on_refusal = [this](std::string_view reason) {
      std::lock_guard lock(mutex_);
      ++refusals_[std::string(reason)];
    };
    auto server = HttpServer::create(std::move(options), [this](const HttpServerRequest& r) {
      ++handled_;
      return HttpServerResponse{200, "text/plain", "ok " + std::to_string(r.body.size()) + "\n"};
    });
    ASSERT_TRUE(server.ok()) << server.status().toString();
    server_ = std::move(server).value();
    server_->start();
  }
  int refusals(const std::string& reason) {
    std::lock_guard lock(mutex_);
    return refusals_[reason];
  }
  // A deadline's refusal is counted by the handler that runs after the stream closed the socket,
  // so a client can see the close first: the count, once it arrives (at most 2 s).
  int refusalsOnceCounted(const std::string& reason) {
    for (int i = 0; i < 200 && refusals(reason) == 0; ++i) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    return refusals(reason);
  }
  int port() const { return server_->port(); }
  static std::string post(const std::string& body, const std::string& type = "text/plain") {
    return "POST /x HTTP/1.1\r\nHost: x\r\nContent-Type: " + type +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }
  // One request on a new connection; the status line of the answer, or "" when closed.
  std::string statusOf(const std::string& request, const char* from = "127.0.0.1") {
    RawConnection connection(port(), from);
    connection.send(request);
    return connection.statusLine(milliseconds(2000));
  }

  std::mutex mutex_;
  std::map<std::string, int> refusals_;
  std::atomic<int> handled_{0};
  std::unique_ptr<HttpServer> server_;
};

TEST_F(LimitsTest, AnOversizedHeaderIs431AndALongTarget414) {
  HttpServerOptions options;
  options.max_header_bytes = 1024;
  options.max_target_bytes = 100;
  start(options);
  EXPECT_EQ(statusOf("GET /x HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(2000, 'a') + "\r\n\r\n"),
            "HTTP/1.1 431 Request Header Fields Too Large");
  EXPECT_EQ(statusOf("GET /" + std::string(200, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n"),
            "HTTP/1.1 414 URI Too Long");
  EXPECT_EQ(statusOf("GET /" + std::string(90, 'a') +
                     " HTTP/1.1\r\nHost: x\r\nX-Ok: " + std::string(600, 'a') + "\r\n\r\n"),
            "HTTP/1.1 200 OK");
  EXPECT_EQ(refusals("header_too_large"), 1);
  EXPECT_EQ(refusals("target_too_long"), 1);
  EXPECT_EQ(handled_, 1);
}

TEST_F(LimitsTest, JsonPastItsShapeIsRefused400BeforeTheHandler) {
  HttpServerOptions options;
  options.max_body_bytes = 1024 * 1024;
  options.small_body_bytes = 1024 * 1024;
  options.json = {512, 10'000, 1 << 20};
  start(options);
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  RawConnection connection(port());
  connection.send(post(deep, "application/json"));
  const std::string answer = connection.receive(milliseconds(2000));
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer.substr(0, 200);
  EXPECT_NE(answer.find("deeper than 512 levels"), std::string::npos) << answer;
  std::string many = "[";
  for (int i = 0; i < 20'000; ++i) {
    many += "0,";
  }
  many += "0]";
  EXPECT_EQ(statusOf(post(many, "application/json; charset=utf-8")), "HTTP/1.1 400 Bad Request");
  std::string keys = "{";
  for (int i = 0; i < 5'000; ++i) {
    keys += "\"k" + std::to_string(i) + "\":0,";
  }
  keys += "\"z\":0}";
  EXPECT_EQ(statusOf(post(keys, "application/json")), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(handled_, 0);
  // The same bodies not declared JSON reach the handler (the limits are for JSON), and a
  // shallow JSON body passes.
  EXPECT_EQ(statusOf(post(deep)), "HTTP/1.1 200 OK");
  EXPECT_EQ(statusOf(post(R"({"a": [[{"b": 1}]]})", "application/json")), "HTTP/1.1 200 OK");
  EXPECT_EQ(refusals("json_depth"), 1);
  EXPECT_EQ(refusals("json_values"), 1);
  EXPECT_EQ(refusals("json_keys"), 1);
}

TEST_F(LimitsTest, ASlowBodyIsClosedAtTheRequestDeadlineAndASlowHeaderAtItsOwn) {
  HttpServerOptions options;
  options.header_timeout = milliseconds(300);
  options.request_timeout = milliseconds(800);
  start(options);
  RawConnection body(port());
  RawConnection header(port());
  const auto start = std::chrono::steady_clock::now();
  body.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123");
  header.send("GET /x HTTP/1.1\r\nHost: x\r\n");
  // A byte every 100 ms keeps each read busy, not the request's deadlines.
  for (int i = 0; i < 20 && !body.closedByPeer(); ++i) {
    body.trySend("5");
    header.trySend("X");
    body.receive(milliseconds(100));
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(body.closedByPeer());
  EXPECT_GE(elapsed, milliseconds(700));
  EXPECT_LT(elapsed, milliseconds(1500));
  EXPECT_EQ(header.receive(milliseconds(500)), "");
  EXPECT_TRUE(header.closedByPeer());
  EXPECT_EQ(refusalsOnceCounted("request_timeout"), 1);
  EXPECT_EQ(refusalsOnceCounted("header_timeout"), 1);
  EXPECT_EQ(handled_, 0);
  EXPECT_EQ(statusOf(post("fast")), "HTTP/1.1 200 OK");
}

TEST_F(LimitsTest, AtTheConnectionCapAWaitingConnectionMakesRoomElseTheNewOneIsRefused) {
  HttpServerOptions options;
  options.max_connections = 3;
  options.max_connections_per_peer = 2;
  options.header_timeout = std::chrono::seconds(30);
  start(options);
  // Two busy connections from 127.0.0.1 (a request begun): its third is refused, while a
  // second address is still served.
  RawConnection busy1(port());
  RawConnection busy2(port());
  busy1.send("GET /x HTTP/1.1\r\n");
  busy2.send("GET /x HTTP/1.1\r\n");
  std::this_thread::sleep_for(milliseconds(100));
  RawConnection third(port());
  EXPECT_EQ(third.receive(milliseconds(1000)), "");
  EXPECT_TRUE(third.closedByPeer());
  EXPECT_EQ(refusals("peer_connections"), 1);
  EXPECT_EQ(statusOf("GET /x HTTP/1.1\r\nHost: x\r\n\r\n", "127.0.0.2"), "HTTP/1.1 200 OK");
  // 127.0.0.2 idle (waiting) takes the last slot; the next connection from 127.0.0.3 takes
  // its slot, and the idle one is closed.
  std::this_thread::sleep_for(milliseconds(100));  // the server has seen the last one close
  RawConnection idle(port(), "127.0.0.2");
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(statusOf("GET /x HTTP/1.1\r\nHost: x\r\n\r\n", "127.0.0.3"), "HTTP/1.1 200 OK");
  EXPECT_EQ(idle.receive(milliseconds(1000)), "");
  EXPECT_TRUE(idle.closedByPeer());
  EXPECT_EQ(refusals("idle_evicted"), 1);
  // With every slot busy a new connection is refused.
  RawConnection busy3(port(), "127.0.0.4");
  busy3.send("GET /x HTTP/1.1\r\n");
  std::this_thread::sleep_for(milliseconds(100));
  RawConnection refused(port(), "127.0.0.5");
  EXPECT_EQ(refused.receive(milliseconds(1000)), "");
  EXPECT_TRUE(refused.closedByPeer());
  EXPECT_EQ(refusals("connections"), 1);
  // The busy ones are still served when they finish their requests.
  busy1.send("Host: x\r\n\r\n");
  EXPECT_EQ(busy1.statusLine(milliseconds(1000)), "HTTP/1.1 200 OK");
}

TEST_F(LimitsTest, TheBodyBudgetAnswers503WhileSmallBodiesStillPass) {
  HttpServerOptions options;
  options.max_body_bytes = 1000;
  options.small_body_bytes = 100;
  options.body_budget_bytes = 1500;
  start(options);
  // 900 of 1500 bytes held by a body being sent.
  RawConnection held(port());
  held.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 900\r\n\r\n" + std::string(10, 'a'));
  std::this_thread::sleep_for(milliseconds(100));
  RawConnection refused(port());
  refused.send(post(std::string(700, 'b')));
  EXPECT_EQ(refused.statusLine(milliseconds(2000)), "HTTP/1.1 503 Service Unavailable");
  const std::string answer = refused.receive(milliseconds(300));
  EXPECT_NE(answer.find("Retry-After: 1\r\n"), std::string::npos) << answer;
  EXPECT_EQ(refusals("body_budget"), 1);
  EXPECT_EQ(statusOf(post(std::string(500, 'c'))), "HTTP/1.1 200 OK");  // 900 + 500 fit
  EXPECT_EQ(statusOf(post(std::string(100, 'd'))), "HTTP/1.1 200 OK");  // small: not charged
  held.send(std::string(890, 'a'));
  EXPECT_EQ(held.statusLine(milliseconds(1000)), "HTTP/1.1 200 OK");
  // Given back once answered.
  EXPECT_EQ(statusOf(post(std::string(700, 'e'))), "HTTP/1.1 200 OK");
}

TEST_F(LimitsTest, AFloodIsLoggedAFewTimesAndCountedEveryTime) {
  HttpServerOptions options;
  options.max_header_bytes = 256;
  start(options);
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(statusOf("GET /x HTTP/1.1\r\nX: " + std::string(500, 'a') + "\r\n\r\n"),
              "HTTP/1.1 431 Request Header Fields Too Large");
  }
  EXPECT_EQ(refusals("header_too_large"), 30);
  EXPECT_EQ(statusOf("GET /x HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 200 OK");
}

}  // namespace
}  // namespace kvc::runtime
