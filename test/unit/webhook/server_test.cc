// The webhooks' HTTPS server against a real TLS client (libcurl): routing, limits, keep-alive,
// and a certificate rotated on disk being picked up without dropping established connections.
#include "kvc/webhook/server.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "kvc/webhook/routes.h"

namespace kvc::webhook {
namespace {

namespace fs = std::filesystem;

// A self-signed certificate for 127.0.0.1, written with the openssl command line.
void makeCertificate(const fs::path& dir, const std::string& name) {
  const std::string command =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=" + name +
      " -addext subjectAltName=IP:127.0.0.1 -keyout '" + (dir / (name + ".key")).string() +
      "' -out '" + (dir / (name + ".crt")).string() + "' >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
}

void install(const fs::path& dir, const std::string& name) {
  // Replace atomically, as a certificate manager does.
  fs::copy_file(dir / (name + ".crt"), dir / "tls.crt.tmp", fs::copy_options::overwrite_existing);
  fs::copy_file(dir / (name + ".key"), dir / "tls.key.tmp", fs::copy_options::overwrite_existing);
  fs::rename(dir / "tls.key.tmp", dir / "tls.key");
  fs::rename(dir / "tls.crt.tmp", dir / "tls.crt");
}

size_t collect(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

struct Reply {
  CURLcode result = CURLE_OK;
  long status = 0;
  long new_connections = 0;
  std::string body;
};

class Client {
public:
  Client() : curl_(curl_easy_init()) {}
  ~Client() { curl_easy_cleanup(curl_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Reply call(const std::string& url, const fs::path& ca, const std::string& body = {},
             const std::string& content_type = "application/json") {
    Reply reply;
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, ("Content-Type: " + content_type).c_str());
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_CAINFO, ca.c_str());
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &reply.body);
    if (!body.empty()) {
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    } else {
      curl_easy_setopt(curl_, CURLOPT_HTTPGET, 1L);
    }
    reply.result = curl_easy_perform(curl_);
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &reply.status);
    curl_easy_getinfo(curl_, CURLINFO_NUM_CONNECTS, &reply.new_connections);
    curl_slist_free_all(headers);
    return reply;
  }

private:
  CURL* curl_;
};

const char* kReview = R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
  "request": {"uid": "abc-123", "operation": "CREATE", "resource": {"resource": "pods"},
  "namespace": "ns", "object": {"kind": "Pod", "metadata": {"name": "x"}}}})";

class ServerTest : public testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kvc-server-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    makeCertificate(dir_, "first");
    install(dir_, "first");
    serve();
  }

  // (Re)starts the server with the test's options, changed by `change`.
  void serve(const std::function<void(runtime::HttpServerOptions&)>& change = {}) {
    server_.reset();
    WebhookRoutes routes;
    routes.mutator = std::make_shared<PodMutator>(std::make_shared<policy::ClusterSnapshot>(),
                                                  [] { return api::Settings{}; });
    routes.ready = [] { return true; };
    routes.metrics = &metrics_;
    runtime::HttpServerOptions options = defaultServerOptions();
    options.cert_file = (dir_ / "tls.crt").string();
    options.key_file = (dir_ / "tls.key").string();
    options.reload_interval = std::chrono::milliseconds(50);
    options.max_body_bytes = 64 * 1024;
    if (change) {
      change(options);
    }
    auto server = startServer(options, routes);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(server).value();
    base_ = "https://127.0.0.1:" + std::to_string(server_->port());
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(dir_);
  }

  fs::path dir_;
  runtime::Registry metrics_;
  std::unique_ptr<runtime::HttpServer> server_;
  std::string base_;
};

TEST_F(ServerTest, AnswersAReviewEchoingTheUid) {
  Client client;
  const Reply reply = client.call(base_ + std::string(kMutatePodPath), dir_ / "first.crt", kReview);
  ASSERT_EQ(reply.result, CURLE_OK) << curl_easy_strerror(reply.result);
  EXPECT_EQ(reply.status, 200);
  const Json review = Json::parse(reply.body);
  EXPECT_EQ(review["response"]["uid"], "abc-123");
  EXPECT_EQ(review["response"]["allowed"], true);
}

TEST_F(ServerTest, ServesProbesAndMetrics) {
  Client client;
  EXPECT_EQ(client.call(base_ + "/healthz", dir_ / "first.crt").status, 200);
  EXPECT_EQ(client.call(base_ + "/readyz", dir_ / "first.crt").status, 200);
  client.call(base_ + std::string(kValidatePodPath), dir_ / "first.crt", kReview);
  const Reply metrics = client.call(base_ + "/metrics", dir_ / "first.crt");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("kvcache_admission_requests_total{"), std::string::npos);
  EXPECT_NE(metrics.body.find("kvcache_admission_duration_seconds_bucket{"), std::string::npos);
  EXPECT_EQ(client.call(base_ + "/nope", dir_ / "first.crt").status, 404);
}

TEST_F(ServerTest, RefusesWrongContentTypeBadBodiesAndOversizedBodies) {
  Client client;
  const std::string url = base_ + std::string(kMutatePodPath);
  EXPECT_EQ(client.call(url, dir_ / "first.crt", kReview, "text/plain").status, 415);
  EXPECT_EQ(client.call(url, dir_ / "first.crt", "{\"kind\": \"x\"}").status, 400);
  EXPECT_EQ(client.call(url, dir_ / "first.crt").status, 405);
  const std::string huge(128 * 1024, ' ');
  EXPECT_EQ(client.call(url, dir_ / "first.crt", huge).status, 413);
}

TEST_F(ServerTest, KeepsConnectionsAlive) {
  Client client;
  const std::string url = base_ + std::string(kMutatePodPath);
  EXPECT_EQ(client.call(url, dir_ / "first.crt", kReview).new_connections, 1);
  EXPECT_EQ(client.call(url, dir_ / "first.crt", kReview).new_connections, 0);
  EXPECT_EQ(client.call(url, dir_ / "first.crt", kReview).new_connections, 0);
}

TEST_F(ServerTest, PicksUpARotatedCertificateWithoutDroppingConnections) {
  const std::string url = base_ + std::string(kMutatePodPath);
  Client established;
  ASSERT_EQ(established.call(url, dir_ / "first.crt", kReview).status, 200);

  makeCertificate(dir_, "second");
  install(dir_, "second");
  Reply fresh;
  for (int i = 0; i < 100; ++i) {  // up to 5 s for the 50 ms reload tick
    Client client;
    fresh = client.call(url, dir_ / "second.crt", kReview);
    if (fresh.result == CURLE_OK) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(fresh.result, CURLE_OK) << "new connections never saw the rotated certificate";
  EXPECT_EQ(fresh.status, 200);
  Client stale;
  EXPECT_NE(stale.call(url, dir_ / "first.crt", kReview).result, CURLE_OK)
      << "new connections still get the old certificate";

  // The connection accepted before the rotation is still served, without reconnecting.
  const Reply again = established.call(url, dir_ / "first.crt", kReview);
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.new_connections, 0);
  EXPECT_NE(
      metrics_.render().find("kvcache_webhook_certificate_reloads_total{result=\"success\"} 1"),
      std::string::npos)
      << metrics_.render();
}

// A plain TCP connection to 127.0.0.1:port (no TLS): what an idle flood opens.
class Socket {
public:
  explicit Socket(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  }
  ~Socket() { ::close(fd_); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  void send(const std::string& bytes) {
    EXPECT_EQ(::write(fd_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  // True when the server closes the connection within `timeout`.
  bool closedWithin(std::chrono::milliseconds timeout) {
    timeval tv{0, static_cast<suseconds_t>(timeout.count() * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char buffer[256];
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
      if (n == 0 || (n < 0 && errno == ECONNRESET)) {
        return true;
      }
      if (n < 0) {
        return false;
      }
    }
  }

private:
  int fd_;
};

TEST_F(ServerTest, ADeepReviewIsRefused400AndCountedWhileReviewsStillPass) {
  serve([](runtime::HttpServerOptions& options) { options.max_body_bytes = kMaxReviewBytes; });
  Client client;
  const std::string url = base_ + std::string(kMutatePodPath);
  std::string deep = kReview;
  const std::string nested = std::string(100'000, '[') + std::string(100'000, ']');
  deep.replace(deep.find("{\"kind\": \"Pod\""),
               std::string(R"({"kind": "Pod", "metadata": {"name": "x"}})").size(), nested);
  const Reply refused = client.call(url, dir_ / "first.crt", deep);
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body.find("deeper than 512 levels"), std::string::npos) << refused.body;
  EXPECT_EQ(client.call(url, dir_ / "first.crt", kReview).status, 200);
  EXPECT_NE(metrics_.render().find("kvcache_webhook_refusals_total{reason=\"json_depth\"} 1"),
            std::string::npos)
      << metrics_.render();
}

TEST_F(ServerTest, IdleConnectionsMakeRoomAndAStalledHandshakeIsClosedAtItsDeadline) {
  serve([](runtime::HttpServerOptions& options) {
    options.max_connections = 4;
    options.max_connections_per_peer = 4;
    options.handshake_timeout = std::chrono::milliseconds(500);
  });
  const int port = server_->port();
  std::vector<std::unique_ptr<Socket>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<Socket>(port));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Client client;  // every slot taken by a connection that sent nothing: one of them makes room
  EXPECT_EQ(client.call(base_ + "/healthz", dir_ / "first.crt").status, 200);
  EXPECT_TRUE(idle.front()->closedWithin(std::chrono::milliseconds(300)));

  Socket stalled(port);
  stalled.send(std::string(1, '\x16'));  // the first byte of a ClientHello, then nothing
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(stalled.closedWithin(std::chrono::milliseconds(2000)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
  const std::string metrics = metrics_.render();
  EXPECT_NE(metrics.find("kvcache_webhook_refusals_total{reason=\"idle_evicted\"} "),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("kvcache_webhook_refusals_total{reason=\"handshake_timeout\"} "),
            std::string::npos)
      << metrics;
}

TEST(ServerStart, RefusesAMissingCertificate) {
  runtime::Registry metrics;
  WebhookRoutes routes;
  routes.metrics = &metrics;
  runtime::HttpServerOptions options = defaultServerOptions();
  options.cert_file = "/nonexistent/tls.crt";
  options.key_file = "/nonexistent/tls.key";
  auto server = startServer(options, routes);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("/nonexistent/tls.crt"), std::string::npos);
}

}  // namespace
}  // namespace kvc::webhook
