#pragma once
// The pure request builder (after kube-rs `kube-core/src/request.rs`): verb + resource +
// parameters in, method + path + query + body out. No I/O, so every URL the client sends is
// tested by exact string in test/unit/kube/request_test.cc.

#include <chrono>
#include <string>
#include <string_view>

#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/kube/params.h"
#include "kvc/kube/resource.h"

namespace kvc::kube {

inline constexpr std::string_view kContentJson = "application/json";
inline constexpr std::string_view kContentMergePatch = "application/merge-patch+json";
inline constexpr std::string_view kContentJsonPatch = "application/json-patch+json";
inline constexpr std::string_view kContentStrategicMergePatch =
    "application/strategic-merge-patch+json";
inline constexpr std::string_view kContentApplyPatch = "application/apply-patch+yaml";

// One HTTP request relative to the server URL.
struct HttpRequest {
  std::string method;        // GET, POST, PUT, PATCH, DELETE
  std::string url;           // path and query: "/api/v1/namespaces/a/pods?limit=5"
  std::string body;          // empty for GET
  std::string content_type;  // of body
  bool watch = false;        // a streaming response: no overall timeout, body read as events
  // Overall deadline of the exchange; zero means the client's default (ignored for watches,
  // which end with their server-side timeoutSeconds).
  std::chrono::milliseconds timeout{0};
};

// Percent-encodes a query value (everything but RFC 3986 unreserved characters).
std::string urlEncode(std::string_view value);

// Builds requests for one resource in one namespace ("" = all namespaces for a namespaced
// resource; must be "" for a cluster-scoped one).
class RequestBuilder {
public:
  RequestBuilder(ResourceType resource, std::string namespace_name = "");

  const ResourceType& resource() const { return resource_; }
  const std::string& namespaceName() const { return namespace_name_; }

  // "/apis/apps/v1/namespaces/a/deployments" (or without the namespace segment).
  std::string collectionPath() const;

  Result<HttpRequest> get(std::string_view name) const;
  Result<HttpRequest> list(const ListParams& params) const;
  Result<HttpRequest> watch(const WatchParams& params) const;
  Result<HttpRequest> create(const Json& object, const PostParams& params) const;
  Result<HttpRequest> replace(std::string_view name, const Json& object,
                              const PostParams& params) const;
  Result<HttpRequest> remove(std::string_view name, const DeleteParams& params) const;
  Result<HttpRequest> removeCollection(const DeleteParams& params, const ListParams& list) const;
  Result<HttpRequest> patch(std::string_view name, const Patch& patch,
                            const PatchParams& params) const;

  // The same verbs on a subresource ("status", "scale").
  Result<HttpRequest> getSubresource(std::string_view subresource, std::string_view name) const;
  Result<HttpRequest> replaceSubresource(std::string_view subresource, std::string_view name,
                                         const Json& object, const PostParams& params) const;
  Result<HttpRequest> patchSubresource(std::string_view subresource, std::string_view name,
                                       const Patch& patch, const PatchParams& params) const;
  // POST to a subresource (serviceaccounts/<name>/token).
  Result<HttpRequest> createSubresource(std::string_view subresource, std::string_view name,
                                        const Json& object, const PostParams& params) const;

private:
  Result<std::string> objectPath(std::string_view name, std::string_view subresource) const;
  Status checkNamespace(bool for_object) const;

  ResourceType resource_;
  std::string namespace_name_;
};

}  // namespace kvc::kube
