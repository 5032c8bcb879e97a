#pragma once
// Typed reads over an informer's cache (client-go's generated listers): objects come out decoded
// into their api:: type, so a reconciler never walks raw JSON.
//
// Each stored version is decoded once. The cache keeps objects packed (store.h) and a pass that
// reads every Binding of a master would otherwise unpack and decode all of them on every pass:
// with 1,000 Bindings that was about two thirds of a pool pass's CPU (docs/performance.md). The
// lister keeps, per key, the packed value it decoded and the decoded object; a read whose packed
// value is the one it has (an update replaces the packed value, never changes it) returns the same
// shared immutable object. Like ObjectPtr, a reader keeps what it got after the cache moves on, and
// copies to change it.
//
// A cached object that does not decode (a wrong type the schema let through) is left out of
// list() and byIndex() and reported by get() as its error; the lister logs it once per
// resourceVersion, so one bad object neither hides the others nor floods the log.
//
// Thread-safe: any number of workers may share one lister.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/runtime/store.h"

namespace kvc::runtime {

// Logs a cached object that failed to decode (once per key and resourceVersion).
void reportUndecodable(const std::string& kind, const Json& object, const Status& error);

template <typename T>
class Lister {
public:
  using Ptr = std::shared_ptr<const T>;
  using Decode = std::function<Result<T>(const Json&)>;

  Lister(const Cache& cache, Decode decode, std::string kind)
      : cache_(&cache), decode_(std::move(decode)), kind_(std::move(kind)) {}

  // nullptr when the cache has no such key; an error when the cached object does not decode.
  Result<Ptr> get(const std::string& key) const {
    Packed packed = cache_->getPacked(key);
    if (!packed) {
      return Ptr();
    }
    return decoded(key, packed);
  }
  std::vector<Ptr> list() const { return decodeAll(cache_->packedList(), /*complete=*/true); }
  std::vector<Ptr> byIndex(const std::string& index, const std::string& value) const {
    return decodeAll(cache_->packedByIndex(index, value), /*complete=*/false);
  }
  // The raw cached object (for writers that need its resourceVersion and fields we do not model).
  ObjectPtr raw(const std::string& key) const { return cache_->get(key); }
  const Cache& cache() const { return *cache_; }

private:
  struct Decoded {
    Packed packed;  // held: its address identifies the version and cannot be reused meanwhile
    Result<Ptr> value;
  };

  Result<Ptr> decoded(const std::string& key, const Packed& packed) const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = memo_.find(key);
      if (it != memo_.end() && it->second.packed == packed) {
        return it->second.value;
      }
    }
    // Decoded outside the lock: workers decoding different objects do not wait on each other
    // (two decoding the same version at once both store the same value).
    Result<Ptr> value = decode(key, packed);
    std::lock_guard<std::mutex> lock(mutex_);
    memo_.insert_or_assign(key, Decoded{packed, value});
    return value;
  }

  Result<Ptr> decode(const std::string& key, const Packed& packed) const {
    ObjectPtr object = unpackObject(packed);
    if (!object) {
      return Status(StatusCode::Internal,
                    kind_ + " " + key + ": the cached object does not unpack");
    }
    Result<T> value = decode_(*object);
    if (!value.ok()) {
      reportUndecodable(kind_, *object, value.status());
      return value.status().withContext(kind_ + " " + key);
    }
    return Ptr(std::make_shared<const T>(std::move(value).value()));
  }

  // `complete`: `packed` is the whole cache, so what it lacks is forgotten now. Otherwise the
  // memo is swept when it outgrows the cache (deleted objects, read once and never again).
  std::vector<Ptr> decodeAll(const std::vector<std::pair<std::string, Packed>>& packed,
                             bool complete) const {
    std::vector<Ptr> out;
    out.reserve(packed.size());
    for (const auto& [key, p] : packed) {
      Result<Ptr> value = decoded(key, p);
      if (value.ok()) {
        out.push_back(std::move(value).value());
      }
    }
    if (complete) {
      forgetAllBut(packed);
    } else {
      sweepIfOutgrown();
    }
    return out;
  }

  void forgetAllBut(const std::vector<std::pair<std::string, Packed>>& packed) const {
    std::map<std::string, Decoded> kept;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [key, p] : packed) {
      auto it = memo_.find(key);
      if (it != memo_.end() && it->second.packed == p) {
        kept.insert(memo_.extract(it));
      }
    }
    memo_.swap(kept);
  }

  void sweepIfOutgrown() const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (memo_.size() <= 2 * cache_->size() + 64) {
        return;
      }
    }
    forgetAllBut(cache_->packedList());
  }

  const Cache* cache_;
  Decode decode_;
  std::string kind_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, Decoded> memo_;
};

}  // namespace kvc::runtime
