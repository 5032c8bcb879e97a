#pragma once
// The Kubernetes REST client: a Client holds the configuration and the transport; an Api is a
// cheap handle on one resource in one namespace (kube-rs `Api<K>`), whose verbs build a request
// with the pure RequestBuilder and send it.
//
// Objects are JSON values (kvc::Json); the typed views of our kinds live in kvc::api and decode
// from these values. Every call is blocking and may be made from any thread; every call takes
// an optional stop_token that ends it early with ErrorReason::Cancelled.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/kube/config.h"
#include "kvc/kube/error.h"
#include "kvc/kube/params.h"
#include "kvc/kube/request.h"
#include "kvc/kube/resource.h"
#include "kvc/kube/transport.h"

namespace kvc::kube {

struct ObjectList {
  std::string resource_version;  // of the list (a consistent snapshot)
  std::string continue_token;    // "" on the last page
  std::optional<std::int64_t> remaining_item_count;
  std::vector<Json> items;
};

enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };

struct WatchEvent {
  WatchEventType type = WatchEventType::Added;
  Json object;  // the object; a Status for Error; only metadata.resourceVersion for Bookmark
};

// How a watch ended without an error.
enum class WatchEnd {
  Closed,    // the server ended the stream (its timeoutSeconds, or it shut down cleanly)
  Declined,  // the callback returned false
};

// Returns false to stop watching.
using WatchCallback = std::function<bool(WatchEvent&&)>;

// What the client reports after each exchange (for request metrics).
struct RequestRecord {
  std::string_view method;
  std::string_view resource;  // "pods", "kvcachepoolbindings", or "" for raw paths
  int code = 0;               // HTTP status; 0 when no answer came
  std::chrono::nanoseconds latency{0};
};
using RequestObserver = std::function<void(const RequestRecord&)>;

// Splits a watch body into newline-delimited JSON events. Pure, so tests feed it arbitrary
// chunkings.
class WatchDecoder {
public:
  // Appends bytes; calls `emit` for every complete event. A line that is not a valid event is
  // a Decode error (the stream is then unusable).
  ApiStatus feed(std::string_view bytes, const std::function<bool(WatchEvent&&)>& emit);
  // True when a partial line remains (an abrupt end mid-event).
  bool hasPartial() const { return !buffer_.empty(); }
  bool declined() const { return declined_; }

private:
  std::string buffer_;
  bool declined_ = false;
};

// Parses one watch event line.
ApiResult<WatchEvent> parseWatchEvent(std::string_view line);

class Client {
public:
  // Builds the curl transport for `config`.
  static Result<std::shared_ptr<Client>> create(Config config);
  // Uses the given transport (tests, alternative stacks).
  static std::shared_ptr<Client> create(Config config, std::shared_ptr<Transport> transport);

  const Config& config() const { return config_; }

  // Installs (or, with nullptr, removes) the hook called after every exchange. Safe while other
  // threads send: a call in flight finishes with the observer it started with. Whoever installs
  // an observer that refers to state it owns must remove it before that state goes.
  void setObserver(RequestObserver observer);

  // Sends a built request; a non-2xx answer becomes its ApiError. `resource` labels metrics.
  ApiResult<HttpResponse> send(const HttpRequest& request, std::string_view resource = {},
                               std::stop_token stop = {}) const;
  // Sends and decodes a JSON object answer.
  ApiResult<Json> sendJson(const Result<HttpRequest>& request, std::string_view resource = {},
                           std::stop_token stop = {}) const;
  // GET of an absolute API path ("/apis/worker.gpustack.ai/v1", "/version").
  ApiResult<Json> getPath(std::string_view path, std::stop_token stop = {}) const;
  // Streams a watch request, calling `callback` for every event.
  ApiResult<WatchEnd> watch(const HttpRequest& request, const WatchCallback& callback,
                            std::string_view resource = {}, std::stop_token stop = {}) const;

private:
  Client(Config config, std::shared_ptr<Transport> transport)
      : config_(std::move(config)), transport_(std::move(transport)) {}
  void observe(std::string_view method, std::string_view resource, int code,
               std::chrono::steady_clock::time_point start) const;

  Config config_;
  std::shared_ptr<Transport> transport_;
  std::atomic<std::shared_ptr<const RequestObserver>> observer_;
};

using ClientPtr = std::shared_ptr<Client>;

// A handle on one resource in one namespace. Copyable and cheap.
class Api {
public:
  Api(ClientPtr client, ResourceType resource, std::string namespace_name = "");

  // The same resource in another namespace ("" = all namespaces / cluster scope).
  Api inNamespace(std::string namespace_name) const;
  // The same handle with a per-request deadline for its non-watch calls.
  Api withTimeout(std::chrono::milliseconds timeout) const;

  const ResourceType& resource() const { return builder_.resource(); }
  const std::string& namespaceName() const { return builder_.namespaceName(); }
  const RequestBuilder& builder() const { return builder_; }
  const ClientPtr& client() const { return client_; }

  ApiResult<Json> get(std::string_view name, std::stop_token stop = {}) const;
  // nullopt when the object does not exist.
  ApiResult<std::optional<Json>> getOptional(std::string_view name,
                                             std::stop_token stop = {}) const;
  ApiResult<ObjectList> list(const ListParams& params = {}, std::stop_token stop = {}) const;
  // One page, handing each item to `on_item` as soon as it is parsed instead of building the
  // whole page first (an informer's relist of thousands of objects never holds a page's
  // parse tree). The returned list carries the metadata and no items.
  ApiResult<ObjectList> listEach(const ListParams& params,
                                 const std::function<void(Json&& item)>& on_item,
                                 std::stop_token stop = {}) const;
  // Follows continue tokens until the last page; `page_size` items per request.
  ApiResult<ObjectList> listAll(ListParams params = {}, std::int64_t page_size = 500,
                                std::stop_token stop = {}) const;
  ApiResult<Json> create(const Json& object, const PostParams& params = {},
                         std::stop_token stop = {}) const;
  // PUT; `object` must carry metadata.resourceVersion for optimistic concurrency.
  ApiResult<Json> replace(std::string_view name, const Json& object, const PostParams& params = {},
                          std::stop_token stop = {}) const;
  // Returns what the server returns: the object (still finalizing) or a Status.
  ApiResult<Json> remove(std::string_view name, const DeleteParams& params = {},
                         std::stop_token stop = {}) const;
  ApiResult<Json> removeCollection(const DeleteParams& params = {}, const ListParams& list = {},
                                   std::stop_token stop = {}) const;
  ApiResult<Json> patch(std::string_view name, const Patch& patch, const PatchParams& params = {},
                        std::stop_token stop = {}) const;
  // Server-side apply of `intent` (apiVersion, kind and metadata.name must be set).
  ApiResult<Json> apply(const Json& intent, std::string_view field_manager, bool force = false,
                        std::stop_token stop = {}) const;

  // The status subresource.
  ApiResult<Json> getStatus(std::string_view name, std::stop_token stop = {}) const;
  ApiResult<Json> replaceStatus(std::string_view name, const Json& object,
                                const PostParams& params = {}, std::stop_token stop = {}) const;
  ApiResult<Json> patchStatus(std::string_view name, const Patch& patch,
                              const PatchParams& params = {}, std::stop_token stop = {}) const;
  ApiResult<Json> applyStatus(const Json& intent, std::string_view field_manager,
                              bool force = false, std::stop_token stop = {}) const;

  // Any subresource (POST): serviceaccounts/<name>/token and the like.
  ApiResult<Json> createSubresource(std::string_view subresource, std::string_view name,
                                    const Json& object, const PostParams& params = {},
                                    std::stop_token stop = {}) const;

  // Blocks while the watch lasts; see Client::watch.
  ApiResult<WatchEnd> watch(const WatchParams& params, const WatchCallback& callback,
                            std::stop_token stop = {}) const;

private:
  Result<HttpRequest> timed(Result<HttpRequest> request) const;

  ClientPtr client_;
  RequestBuilder builder_;
  std::chrono::milliseconds timeout_{0};
};

}  // namespace kvc::kube
