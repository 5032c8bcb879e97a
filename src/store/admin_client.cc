#include "kvc/store/admin_client.h"

#include <charconv>

#include "kvc/common/json.h"

namespace kvc::store {

Status validateAdminAddress(std::string_view address) {
  const std::string quoted = "\"" + std::string(address) + "\"";
  if (address.empty()) {
    return invalidArgument("the admin address is empty; expected host:port");
  }
  for (char c : address) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '/' || c == '?' || c == '#' ||
        c == '@') {
      return invalidArgument("admin address " + quoted +
                             " must be host:port, without scheme, path or whitespace");
    }
  }
  std::string_view host;
  std::string_view port;
  if (address.front() == '[') {
    const auto close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      return invalidArgument("admin address " + quoted + " must be [ipv6]:port");
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    const auto colon = address.rfind(':');
    if (colon == std::string_view::npos) {
      return invalidArgument("admin address " + quoted + " has no port; expected host:port");
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return invalidArgument("admin address " + quoted +
                             ": write an IPv6 address in brackets, [addr]:port");
    }
  }
  if (host.empty()) {
    return invalidArgument("admin address " + quoted + " has no host");
  }
  int value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 1 ||
      value > 65535) {
    return invalidArgument("admin address " + quoted + " needs a port in 1..65535");
  }
  return okStatus();
}

std::string percentEncode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

Result<std::unique_ptr<HttpAdminClient>> HttpAdminClient::create(
    std::string_view admin_address, AdminClientOptions options,
    std::shared_ptr<HttpTransport> transport) {
  KVC_RETURN_IF_ERROR(validateAdminAddress(admin_address));
  if (options.timeout.count() <= 0) {
    return invalidArgument("the admin request timeout must be positive");
  }
  if (!transport) {
    transport = newCurlTransport();
  }
  return std::unique_ptr<HttpAdminClient>(
      new HttpAdminClient(std::string(admin_address), options, std::move(transport)));
}

HttpAdminClient::HttpAdminClient(std::string address, AdminClientOptions options,
                                 std::shared_ptr<HttpTransport> transport)
    : address_(std::move(address)),
      options_(std::move(options)),
      transport_(std::move(transport)) {}

StoreResult<HttpResponse> HttpAdminClient::exchange(std::string_view method,
                                                    const std::string& path, std::string body) {
  HttpRequest request;
  request.method = std::string(method);
  request.url = (options_.tls ? "https://" : "http://") + address_ + path;
  request.tls = options_.tls;
  request.connect_to = options_.connect_to;
  if (method == "PUT" || method == "POST") {
    request.content_type = "application/json";
  }
  request.body = std::move(body);
  request.timeout = options_.timeout;
  request.max_body_bytes = options_.max_body_bytes;
  return transport_->send(request);
}

StoreResult<std::string> HttpAdminClient::getOk(std::string_view path, bool gated) {
  auto response = exchange("GET", std::string(path));
  if (!response.ok()) {
    return response.error();
  }
  const int status = response->status;
  if (status == 200) {
    return std::move(response->body);
  }
  const std::string context = "request " + std::string(path);
  if (gated && status == 503) {
    return StoreError(
        StoreErrorKind::ServicePlaneInactive,
        context + ": the master's service plane is not active (503): " + excerpt(response->body),
        status);
  }
  if (status == 404 && path == kSegmentsDetailPath) {
    return StoreError(
        StoreErrorKind::RouteNotServed,
        context + ": not served (404); the master is older than 0.3.12: " + excerpt(response->body),
        status);
  }
  return StoreError(
      StoreErrorKind::UnexpectedStatus,
      context + ": unexpected status " + std::to_string(status) + ": " + excerpt(response->body),
      status);
}

StoreResult<Health> HttpAdminClient::health() {
  auto body = getOk(kHealthPath, /*gated=*/false);
  if (!body.ok()) {
    return body.error();
  }
  return parseHealth(*body);
}

StoreResult<StoreMetrics> HttpAdminClient::metrics() {
  auto body = getOk(kMetricsPath, /*gated=*/true);
  if (!body.ok()) {
    return body.error();
  }
  return parseMetrics(*body);
}

StoreResult<SegmentListing> HttpAdminClient::segments() {
  auto body = getOk(kSegmentsDetailPath, /*gated=*/true);
  if (!body.ok()) {
    return body.error();
  }
  return parseSegmentsDetail(*body);
}

StoreResult<std::string> HttpAdminClient::ledger(std::string_view method,
                                                 std::string_view tenant_id, std::string body,
                                                 std::string_view what) {
  std::string path(kTenantQuotasPath);
  if (!tenant_id.empty()) {
    path += "?tenant_id=" + percentEncode(tenant_id);
  }
  auto response = exchange(method, path, std::move(body));
  if (!response.ok()) {
    return StoreError(response.error().kind(),
                      std::string(what) + ": " + response.error().message());
  }
  if (response->status != 200) {
    return classifyLedgerRefusal(response->status, response->body, what);
  }
  return std::move(response->body);
}

namespace {

// The master answers an empty tenant_id on GET with the whole list and refuses it on PUT and
// DELETE; refuse it here, before anything is sent, so it can never be mistaken for an entry.
StoreError emptyTenant(std::string_view what) {
  return StoreError(StoreErrorKind::InvalidParams,
                    std::string(what) + ": the tenant id is empty (refused before sending)");
}

std::string forTenant(std::string_view verb, std::string_view tenant_id) {
  return std::string(verb) + " the quota of reuse domain \"" + std::string(tenant_id) + "\"";
}

}  // namespace

StoreResult<std::vector<TenantQuota>> HttpAdminClient::listTenantQuotas() {
  auto body = ledger("GET", {}, {}, "reading the tenant ledger");
  if (!body.ok()) {
    return body.error();
  }
  return parseTenantQuotaList(*body);
}

StoreResult<TenantQuota> HttpAdminClient::getTenantQuota(std::string_view tenant_id) {
  const std::string what = forTenant("reading", tenant_id);
  if (tenant_id.empty()) {
    return emptyTenant(what);
  }
  auto body = ledger("GET", tenant_id, {}, what);
  if (!body.ok()) {
    return body.error();
  }
  return parseTenantQuotaEntry(*body);
}

StoreResult<TenantQuota> HttpAdminClient::putTenantQuota(std::string_view tenant_id,
                                                         std::int64_t requested_bytes) {
  const std::string what = forTenant("writing", tenant_id);
  if (tenant_id.empty()) {
    return emptyTenant(what);
  }
  Json request = {{"requested_quota_bytes", requested_bytes}};
  auto body = ledger("PUT", tenant_id, request.dump(), what);
  if (!body.ok()) {
    return body.error();
  }
  return parseTenantQuotaEntry(*body);
}

StoreResult<std::optional<TenantQuota>> HttpAdminClient::deleteTenantQuota(
    std::string_view tenant_id) {
  const std::string what = forTenant("removing", tenant_id);
  if (tenant_id.empty()) {
    return emptyTenant(what);
  }
  auto body = ledger("DELETE", tenant_id, {}, what);
  if (!body.ok()) {
    return body.error();
  }
  return parseTenantQuotaDeleted(*body);
}

}  // namespace kvc::store
