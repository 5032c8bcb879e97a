// The libcurl transport against a tiny HTTP server on 127.0.0.1:<ephemeral> in a thread:
// redirects, oversized bodies, deadlines, refused connections, proxies from the environment.
#include "kvc/store/http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace kvc::store {
namespace {

// Answers each connection with handler(request); kHang keeps the connection open, unanswered,
// until the client gives up or the server stops.
class LoopbackServer {
public:
  static constexpr const char* kHang = "<hang>";
  using Handler = std::function<std::string(const std::string&)>;

  explicit LoopbackServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listen_fd_, 16) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
      return;
    }
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }

  ~LoopbackServer() {
    stop_ = true;
    if (thread_.joinable()) {
      thread_.join();
    }
    ::close(listen_fd_);
  }

  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int requests() const { return requests_; }
  std::string lastRequest() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_request_;
  }

private:
  void serve() {
    while (!stop_) {
      pollfd pfd{listen_fd_, POLLIN, 0};
      if (::poll(&pfd, 1, 20) <= 0) {
        continue;
      }
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) {
        continue;
      }
      handle(fd);
      ::close(fd);
    }
  }

  void handle(int fd) {
    std::string request;
    char buffer[4096];
    std::size_t header_end = std::string::npos;
    std::size_t wanted = 0;
    while (!stop_) {
      if (header_end != std::string::npos && request.size() >= header_end + 4 + wanted) {
        break;
      }
      pollfd pfd{fd, POLLIN, 0};
      if (::poll(&pfd, 1, 20) <= 0) {
        continue;
      }
      const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        return;
      }
      request.append(buffer, static_cast<std::size_t>(n));
      if (header_end == std::string::npos) {
        header_end = request.find("\r\n\r\n");
        if (header_end != std::string::npos) {
          const auto cl = request.find("Content-Length: ");
          if (cl != std::string::npos && cl < header_end) {
            wanted = std::stoul(request.substr(cl + 16));
          }
        }
      }
    }
    ++requests_;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last_request_ = request;
    }
    const std::string response = handler_(request);
    if (response == kHang) {
      // Wait until the client hangs up (or the test ends).
      while (!stop_) {
        pollfd pfd{fd, POLLIN, 0};
        if (::poll(&pfd, 1, 20) > 0 && ::recv(fd, buffer, sizeof(buffer), 0) <= 0) {
          return;
        }
      }
      return;
    }
    std::size_t sent = 0;
    while (sent < response.size()) {
      const ssize_t n = ::send(fd, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) {
        return;
      }
      sent += static_cast<std::size_t>(n);
    }
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  mutable std::mutex mutex_;
  std::string last_request_;
};

std::string answer(int status, const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: text/plain\r\n" + extra +
         "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

HttpRequest get(const std::string& url) {
  HttpRequest request;
  request.url = url;
  return request;
}

TEST(HttpTransportTest, ReadsStatusBodyAndContentType) {
  LoopbackServer server([](const std::string&) { return answer(200, "hello"); });
  auto response = newCurlTransport()->send(get(server.url("/health")));
  ASSERT_TRUE(response.ok()) << response.error().message();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hello");
  EXPECT_EQ(response->content_type, "text/plain");
  EXPECT_EQ(server.lastRequest().rfind("GET /health HTTP/1.1\r\n", 0), 0u);
}

// A write fence's not-after instant is checked as the last thing before the request leaves: a
// request whose instant has passed (its process held between the fence's check and the send) is
// not sent at all; one before it is sent.
TEST(HttpTransportTest, ARequestPastItsNotAfterInstantIsNotSent) {
  LoopbackServer server([](const std::string&) { return answer(200, "{}"); });
  HttpRequest late = get(server.url("/api/v1/tenant_quotas/team-a"));
  late.method = "PUT";
  late.not_after = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
  auto refused = newCurlTransport()->send(late);
  ASSERT_TRUE(refused.is(StoreErrorKind::Fenced))
      << (refused.ok() ? "sent" : refused.error().message());
  EXPECT_NE(refused.error().message().find("not sent"), std::string::npos);
  EXPECT_EQ(server.requests(), 0) << "nothing reached the server";

  HttpRequest timely = late;
  timely.not_after = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  ASSERT_TRUE(newCurlTransport()->send(timely).ok());
  EXPECT_EQ(server.requests(), 1);
}

TEST(HttpTransportTest, RedirectsAreNotFollowed) {
  LoopbackServer server([](const std::string&) {
    return answer(302, "moved", "Location: http://127.0.0.1:1/elsewhere\r\n");
  });
  auto response = newCurlTransport()->send(get(server.url("/metrics")));
  ASSERT_TRUE(response.ok()) << response.error().message();
  EXPECT_EQ(response->status, 302);
  EXPECT_EQ(server.requests(), 1);
}

TEST(HttpTransportTest, BodyPastTheLimitFails) {
  LoopbackServer server([](const std::string&) { return answer(200, std::string(2000, 'x')); });
  HttpRequest request = get(server.url("/metrics"));
  request.max_body_bytes = 1024;
  auto response = newCurlTransport()->send(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind(), StoreErrorKind::BodyTooLarge);
  EXPECT_NE(response.error().message().find("larger than 1024 bytes"), std::string::npos)
      << response.error().message();
}

TEST(HttpTransportTest, BodyWithoutLengthPastTheLimitFails) {
  LoopbackServer server([](const std::string&) {
    return "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + std::string(300000, 'y');
  });
  HttpRequest request = get(server.url("/metrics"));
  request.max_body_bytes = 100000;
  auto response = newCurlTransport()->send(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind(), StoreErrorKind::BodyTooLarge);
}

TEST(HttpTransportTest, BodyOfExactlyTheLimitIsRead) {
  LoopbackServer server([](const std::string&) { return answer(200, std::string(1024, 'z')); });
  HttpRequest request = get(server.url("/metrics"));
  request.max_body_bytes = 1024;
  auto response = newCurlTransport()->send(request);
  ASSERT_TRUE(response.ok()) << response.error().message();
  EXPECT_EQ(response->body.size(), 1024u);
}

TEST(HttpTransportTest, SilentServerHitsTheDeadline) {
  LoopbackServer server([](const std::string&) { return std::string(LoopbackServer::kHang); });
  HttpRequest request = get(server.url("/health"));
  request.timeout = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  auto response = newCurlTransport()->send(request);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind(), StoreErrorKind::DeadlineExceeded);
  EXPECT_LT(took, std::chrono::seconds(3));
}

TEST(HttpTransportTest, RefusedConnectionIsATransportError) {
  int port = 0;
  {
    // Take a free port and give it back: nothing listens there afterwards.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    ::close(fd);
  }
  auto response =
      newCurlTransport()->send(get("http://127.0.0.1:" + std::to_string(port) + "/health"));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind(), StoreErrorKind::Transport);
  EXPECT_EQ(response.error().statusCode(), StatusCode::Unavailable);
}

TEST(HttpTransportTest, ProxiesFromTheEnvironmentAreIgnored) {
  LoopbackServer server([](const std::string&) { return answer(200, "direct"); });
  ::setenv("http_proxy", "http://127.0.0.1:1", 1);
  ::setenv("HTTP_PROXY", "http://127.0.0.1:1", 1);
  auto response = newCurlTransport()->send(get(server.url("/health")));
  ::unsetenv("http_proxy");
  ::unsetenv("HTTP_PROXY");
  ASSERT_TRUE(response.ok()) << response.error().message();
  EXPECT_EQ(response->body, "direct");
}

TEST(HttpTransportTest, PutSendsTheBodyAndItsContentType) {
  LoopbackServer server([](const std::string&) { return answer(200, "{}"); });
  HttpRequest request = get(server.url("/api/v1/tenant_quotas?tenant_id=a"));
  request.method = "PUT";
  request.body = R"({"requested_quota_bytes":5})";
  request.content_type = "application/json";
  auto response = newCurlTransport()->send(request);
  ASSERT_TRUE(response.ok()) << response.error().message();
  const std::string seen = server.lastRequest();
  EXPECT_EQ(seen.rfind("PUT /api/v1/tenant_quotas?tenant_id=a HTTP/1.1\r\n", 0), 0u) << seen;
  EXPECT_NE(seen.find("Content-Type: application/json\r\n"), std::string::npos) << seen;
  EXPECT_EQ(seen.substr(seen.size() - request.body.size()), request.body);
}

TEST(HttpTransportTest, DeleteSendsNoBody) {
  LoopbackServer server([](const std::string&) { return answer(200, "{}"); });
  HttpRequest request = get(server.url("/api/v1/tenant_quotas?tenant_id=a"));
  request.method = "DELETE";
  auto response = newCurlTransport()->send(request);
  ASSERT_TRUE(response.ok()) << response.error().message();
  EXPECT_EQ(server.lastRequest().rfind("DELETE /api/v1/tenant_quotas?tenant_id=a ", 0), 0u);
}

}  // namespace
}  // namespace kvc::store
