#pragma once
// Reading one object the way every controller and webhook of this operator must: from an
// informer's cache when it holds the key, else live from the API server (controller-runtime's
// cache-backed client.Reader, with GetAPIReader() behind it).
//
// Only a live read says an object does not exist. A cache that lacks a key may lag a create of a
// moment ago, or not cover the object at all (another label selector, another namespace), so a
// miss there is never "absent"; a live NotFound is. Any other failure of the live read is an
// error, never "absent" either.
//
//   CachedReader pools(client, kube::resources::kvCachePools(), &pool_informer->cache());
//   KVC_ASSIGN_OR_RETURN(std::optional<ObjectPtr> pool, pools.get("", "shared-dram", stop));
//   KVC_ASSIGN_OR_RETURN(std::optional<api::KVCachePool> typed,
//                        pools.getAs("", "shared-dram", &api::poolFromJson, stop));
//
// A null cache reads live every time. `timeout` (0: the client's) bounds each live read: an
// admission webhook passes a bound well inside the API server's timeoutSeconds for it (the
// webhooks' 2 s), so a slow read ends in its own answer rather than the API server's.

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>

#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/kube/client.h"
#include "kvc/kube/resource.h"
#include "kvc/runtime/store.h"

namespace kvc::runtime {

class CachedReader {
public:
  CachedReader(kube::ClientPtr client, kube::ResourceType resource, const Cache* cache,
               std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // The object (cached, else live); nullopt only on a live NotFound; otherwise the live read's
  // error (the caller names what it was reading for).
  Result<std::optional<ObjectPtr>> get(std::string_view namespace_name, std::string_view name,
                                       std::stop_token stop = {}) const;

  // The same, decoded. An object that does not decode is an error, never "absent".
  template <typename T>
  Result<std::optional<T>> getAs(std::string_view namespace_name, std::string_view name,
                                 Result<T> (*decode)(const Json&),
                                 std::stop_token stop = {}) const {
    KVC_ASSIGN_OR_RETURN(std::optional<ObjectPtr> object,
                         get(namespace_name, name, std::move(stop)));
    if (!object) {
      return std::optional<T>();
    }
    Result<T> decoded = decode(**object);
    if (!decoded.ok()) {
      return decoded.status();
    }
    return std::optional<T>(std::move(decoded).value());
  }

  // Whether the object exists: the cache holds it, or a live read finds it.
  Result<bool> exists(std::string_view namespace_name, std::string_view name,
                      std::stop_token stop = {}) const;

private:
  kube::ClientPtr client_;
  kube::ResourceType resource_;
  const Cache* cache_;
  std::chrono::milliseconds timeout_;
};

}  // namespace kvc::runtime
