#pragma once
// Typed reads over an informer's cache (client-go's generated listers): objects come out decoded
// into their api:: type, so a reconciler never walks raw JSON.
//
// A cached object that does not decode (a wrong type the schema let through) is left out of
// list() and byIndex() and reported by get() as its error; the lister logs it once per
// resourceVersion, so one bad object neither hides the others nor floods the log.

#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/runtime/store.h"

namespace kvc::runtime {

// Logs a cached object that failed to decode (once per key and resourceVersion).
void reportUndecodable(const std::string& kind, const Json& object, const Status& error);

template <typename T> class Lister {
public:
  using Decode = std::function<Result<T>(const Json&)>;

  Lister(const Cache& cache, Decode decode, std::string kind)
      : cache_(&cache), decode_(std::move(decode)), kind_(std::move(kind)) {}

  // nullopt when the cache has no such key; an error when the cached object does not decode.
  Result<std::optional<T>> get(const std::string& key) const {
    ObjectPtr object = cache_->get(key);
    if (!object) {
      return std::optional<T>();
    }
    Result<T> decoded = decode_(*object);
    if (!decoded.ok()) {
      return decoded.status().withContext(kind_ + " " + key);
    }
    return std::optional<T>(std::move(decoded).value());
  }
  std::vector<T> list() const { return decodeAll(cache_->list()); }
  std::vector<T> byIndex(const std::string& index, const std::string& value) const {
    return decodeAll(cache_->byIndex(index, value));
  }
  // The raw cached object (for writers that need its resourceVersion and fields we do not model).
  ObjectPtr raw(const std::string& key) const { return cache_->get(key); }
  const Cache& cache() const { return *cache_; }

private:
  std::vector<T> decodeAll(const std::vector<ObjectPtr>& objects) const {
    std::vector<T> out;
    out.reserve(objects.size());
    for (const ObjectPtr& object : objects) {
      Result<T> decoded = decode_(*object);
      if (decoded.ok()) {
        out.push_back(std::move(decoded).value());
      } else {
        reportUndecodable(kind_, *object, decoded.status());
      }
    }
    return out;
  }

  const Cache* cache_;
  Decode decode_;
  std::string kind_;
};

}  // namespace kvc::runtime
