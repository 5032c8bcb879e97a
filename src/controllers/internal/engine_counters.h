#pragma once
// The engine counter reader (docs/observability.md, "Per-Binding hit rate"): a controller over
// engine Pods that reads each Ready one's Prometheus metrics at most once per resync, with a
// short deadline, and keeps the hit and query counters it found in an EngineCounterBook that
// the pool pass reads (a Binding's status.hitRate and CacheUsed). Keyed by Pod, so a Pod that
// does not answer costs one timed-out request per resync on one worker, never a pool pass.
//
// It runs only while this replica leads (it is a controller of the manager), reads nothing
// while the Setting kv-cache-engine-metrics is "false", and forgets a Pod once it is gone or no
// longer Ready.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "internal/engine_pods.h"
#include "kvc/api/settings.h"
#include "kvc/common/clock.h"
#include "kvc/policy/usage/binding_use.h"
#include "kvc/policy/usage/engine_counts.h"
#include "kvc/runtime/controller.h"
#include "kvc/store/http.h"

namespace kvc::controllers::internal {

inline constexpr std::chrono::milliseconds kEngineReadTimeout{2000};
inline constexpr std::size_t kEngineMetricsMaxBytes = std::size_t{4} << 20;  // 4 MiB

// What the reader last found at one Pod ("ns/name").
struct EngineReading {
  std::string uid;  // the Pod's, so that a Pod recreated under the name starts over
  std::string url;
  Clock::TimePoint read_at{};
  std::optional<policy::EngineCounts> counts;  // absent: not readable (`unread` says why)
  std::string unread;
};

// Shared by the reader (writes) and the pool passes (read). Thread-safe.
class EngineCounterBook {
public:
  void record(const std::string& pod_key, EngineReading reading);
  void forget(const std::string& pod_key);
  std::optional<EngineReading> find(const std::string& pod_key) const;
  std::size_t size() const;

private:
  mutable std::mutex mutex_;
  std::map<std::string, EngineReading> readings_;
};

struct EngineCounterReaderConfig {
  EnginePodSources sources;
  std::shared_ptr<EngineCounterBook> book;
  std::shared_ptr<store::HttpTransport> http;
  std::function<api::Settings()> settings;  // null: the defaults
  Clock::Duration resync = std::chrono::seconds(30);
  std::chrono::milliseconds timeout = kEngineReadTimeout;
  const Clock* clock = &realClock();
};

class EngineCounterReader final : public runtime::Reconciler {
public:
  explicit EngineCounterReader(EngineCounterReaderConfig config) : config_(std::move(config)) {}
  // `request` names a Pod of either source.
  Result<runtime::Action> reconcile(const runtime::Request& request, std::stop_token stop) override;

private:
  runtime::ObjectPtr podOf(const std::string& key) const;
  EngineReading read(const std::string& url, const std::string& engine) const;

  EngineCounterReaderConfig config_;
};

// The Binding's Ready engine Pods with what the reader last found at each, for the pool pass
// (policy::BindingUse): how long each has been Ready at `now`, and its counters.
policy::BindingUse bindingUseOf(const EnginePodSources& sources, const EngineCounterBook& book,
                                const api::Settings& settings, const std::string& binding_key,
                                Clock::WallTime now);

}  // namespace kvc::controllers::internal
