#pragma once
// Kubernetes Events (events.k8s.io/v1) about our objects, recorded the way client-go's
// tools/events broadcaster does it:
//
//   - Deduplicated: an event isomorphic to one recorded within the series window (same object,
//     type, reason, action, note, reporting controller) does not create a new Event. The second
//     occurrence turns the first into a series (series.count = 2, patched at once); later ones
//     only bump the count in memory, and the counts are patched at most once per flush period.
//     A series that saw nothing for a window is finished: the next occurrence creates a new Event.
//   - Rate-limited: each object has a token bucket (burst 25, one token per 5 minutes, as
//     client-go's spam filter); events past it are dropped and counted.
//   - Asynchronous: event() never blocks on the API; a sender thread writes, and a bounded
//     queue drops (and counts) what it cannot hold.
//
// Cluster-scoped objects get their Events in the "default" namespace (client-go's choice).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "kvc/common/clock.h"
#include "kvc/common/json.h"
#include "kvc/kube/client.h"

namespace kvc::runtime {

enum class EventType { Normal, Warning };

struct EventRecorderOptions {
  std::string reporting_controller = "kvcache-operator";
  std::string reporting_instance;  // this replica's identity (required by the API)
  Clock::Duration series_window = std::chrono::minutes(6);
  Clock::Duration flush_period = std::chrono::seconds(30);
  int burst = 25;
  Clock::Duration refill_every = std::chrono::minutes(5);
  std::size_t max_pending = 1000;
};

class EventRecorder {
public:
  EventRecorder(kube::ClientPtr client, EventRecorderOptions options,
                const Clock& clock = realClock());
  ~EventRecorder();

  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  void start();
  // Sends what is queued (best effort), then stops the sender. Idempotent.
  void stop();

  // Records an event about `regarding` (an object with apiVersion, kind and metadata).
  // `reason` is a CamelCase machine word, `action` what the controller did or failed to do,
  // `note` a sentence for people (cut to 1 KiB).
  void event(const Json& regarding, EventType type, std::string_view reason,
             std::string_view action, std::string_view note);

  struct Stats {
    std::uint64_t created = 0;
    std::uint64_t series_patches = 0;
    std::uint64_t aggregated = 0;  // occurrences folded into an existing Event
    std::uint64_t dropped_rate_limited = 0;
    std::uint64_t dropped_queue_full = 0;
    std::uint64_t failed = 0;
  };
  Stats stats() const;
  // Blocks until the sender has nothing queued (tests).
  void flushForTest();

private:
  struct Series {
    std::string namespace_name;
    // Chosen when the first occurrence is recorded (the object's name and a time suffix), so
    // it is known before the create is sent; a create that fails drops the series.
    std::string event_name;
    std::int64_t count = 1;
    std::int64_t flushed_count = 1;
    Clock::TimePoint last_seen{};
    Clock::WallTime last_seen_wall{};
  };
  struct Bucket {
    double tokens = 0;
    Clock::TimePoint last{};
  };
  struct Op {
    enum Kind { Create, PatchSeries } kind;
    std::string key;  // series key
    Json body;        // the Event for Create
  };

  bool takeToken(const std::string& object_key, Clock::TimePoint now);
  void enqueueLocked(Op op);
  void run(std::stop_token stop);
  void send(const Op& op);
  void flushSeriesLocked(std::deque<Op>& out, bool all);

  kube::ClientPtr client_;
  EventRecorderOptions options_;
  const Clock& clock_;

  mutable std::mutex mutex_;
  std::condition_variable_any cv_;
  std::deque<Op> pending_;
  std::map<std::string, Series> series_;
  std::map<std::string, Bucket> buckets_;
  Stats stats_;
  bool sending_ = false;
  std::jthread sender_;
};

}  // namespace kvc::runtime
