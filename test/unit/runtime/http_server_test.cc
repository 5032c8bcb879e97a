// The probe/metrics HTTP server (port 0) and the Prometheus text rendering.
#include "kvc/runtime/http_server.h"

#include <gtest/gtest.h>

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
  auto server = HttpServer::create({"127.0.0.1", 0}, [](const HttpServerRequest& r) {
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

TEST(HttpServerTest, ABusyPortIsAnError) {
  auto first = HttpServer::create({"127.0.0.1", 0}, [](const HttpServerRequest&) {
    return HttpServerResponse{};
  });
  ASSERT_TRUE(first.ok());
  auto second = HttpServer::create({"127.0.0.1", (*first)->port()},
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

}  // namespace
}  // namespace kvc::runtime
