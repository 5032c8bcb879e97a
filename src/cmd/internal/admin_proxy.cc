#include "internal/admin_proxy.h"

#include <spdlog/spdlog.h>

#include <map>
#include <mutex>
#include <utility>

#include "kvc/policy/store/admin_access.h"

namespace kvc::cmd::internal {
namespace {

constexpr std::size_t kMaxRequestBody = 1 << 20;  // the ledger's bodies are a few hundred bytes
constexpr auto kRefusalLogInterval = std::chrono::minutes(1);

// "Logged once with who was refused": a line per caller and reason a minute, not per request.
class RefusalLog {
public:
  void refused(const runtime::HttpServerRequest& request, const std::string& reason) {
    const std::string who =
        (request.peer_common_name.empty() ? std::string("(no name)") : request.peer_common_name) +
        " of " +
        (request.peer_organization.empty() ? std::string("(no group)") : request.peer_organization);
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    auto [it, fresh] = last_.try_emplace(who + "\n" + reason, now);
    if (!fresh && now - it->second < kRefusalLogInterval) {
      return;
    }
    it->second = now;
    if (last_.size() > 1024) {
      last_.clear();  // a flood of distinct names: forget, and log again
    }
    spdlog::warn("store admin: refused {} from {}: {} {}: {}", who, request.peer_address,
                 request.method, request.path, reason);
  }

private:
  std::mutex mutex_;
  std::map<std::string, std::chrono::steady_clock::time_point> last_;
};

runtime::HttpServerResponse forward(store::HttpTransport& upstream,
                                    const AdminProxyOptions& options,
                                    const runtime::HttpServerRequest& request) {
  store::HttpRequest out;
  out.method = request.method;
  out.url = "http://" + options.upstream + request.target;
  out.body = request.body;
  out.content_type = request.header("content-type");
  out.timeout = options.timeout;
  auto answer = upstream.send(out);
  if (!answer.ok()) {
    return {502, "text/plain; charset=utf-8",
            "the master behind this proxy did not answer: " + answer.error().message() + "\n"};
  }
  return {answer->status,
          answer->content_type.empty() ? std::string("text/plain; charset=utf-8")
                                       : answer->content_type,
          std::move(answer->body)};
}

}  // namespace

Result<std::unique_ptr<runtime::HttpServer>> startAdminProxy(
    const AdminProxyOptions& options, std::shared_ptr<store::HttpTransport> upstream) {
  if (!upstream) {
    upstream = store::newCurlTransport();
  }
  runtime::HttpServerOptions server;
  server.listen = options.listen;
  server.cert_file = options.tls_dir + "/tls.crt";
  server.key_file = options.tls_dir + "/tls.key";
  server.client_ca_file = options.tls_dir + "/ca.crt";
  server.max_body_bytes = kMaxRequestBody;
  server.idle_timeout = std::chrono::seconds(60);
  server.threads = 2;
  auto refusals = std::make_shared<RefusalLog>();
  auto handler = [upstream, options, refusals](const runtime::HttpServerRequest& request) {
    const policy::AdminAccess access =
        policy::adminAccess(request.peer_organization, request.method, request.path);
    if (!access.allowed) {
      refusals->refused(request, access.reason);
      return runtime::HttpServerResponse{403, "text/plain; charset=utf-8",
                                         "forbidden: " + access.reason + "\n"};
    }
    return forward(*upstream, options, request);
  };
  KVC_ASSIGN_OR_RETURN(auto proxy, runtime::HttpServer::create(server, std::move(handler)));
  proxy->start();
  spdlog::info("store leader: admin API on https://{} (mutual TLS, {}), forwarded to {}",
               proxy->address(), options.tls_dir, options.upstream);
  return proxy;
}

bool masterServes(store::HttpTransport& upstream, const std::string& address) {
  store::HttpRequest request;
  request.url = "http://" + address + "/get_all_segments";
  request.timeout = std::chrono::seconds(2);
  auto answer = upstream.send(request);
  return answer.ok() && answer->status == 200;
}

}  // namespace kvc::cmd::internal
