// The HTTP server over plain HTTP (port 0) and the Prometheus text rendering; TLS and
// certificate reload are tested with the webhooks' routes in test/unit/webhook/server_test.cc.
#include "kvc/runtime/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

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
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
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
