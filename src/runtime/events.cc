#include "kvc/runtime/events.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "kvc/common/text.h"
#include "kvc/kube/object.h"
#include "kvc/kube/time.h"

namespace kvc::runtime {
namespace {

constexpr std::size_t kMaxNote = 1024;

// At most `max` bytes, never splitting a UTF-8 character.
std::string cut(std::string_view text, std::size_t max) { return truncateBytes(text, max, ""); }

}  // namespace

EventRecorder::EventRecorder(kube::ClientPtr client, EventRecorderOptions options,
                             const Clock& clock)
    : client_(std::move(client)), options_(std::move(options)), clock_(clock) {}

EventRecorder::~EventRecorder() { stop(); }

void EventRecorder::start() {
  if (sender_.joinable()) {
    return;
  }
  sender_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

void EventRecorder::stop() {
  if (sender_.joinable()) {
    sender_.request_stop();
    sender_.join();
  }
}

EventRecorder::Stats EventRecorder::stats() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return stats_;
}

bool EventRecorder::takeToken(const std::string& object_key, Clock::TimePoint now) {
  auto [it, inserted] = buckets_.try_emplace(object_key);
  Bucket& b = it->second;
  if (inserted) {
    b.tokens = options_.burst;
    b.last = now;
  }
  const double per_second = 1.0 / std::chrono::duration<double>(options_.refill_every).count();
  const double elapsed = std::chrono::duration<double>(now - b.last).count();
  if (elapsed > 0) {
    b.tokens = std::min<double>(options_.burst, b.tokens + elapsed * per_second);
    b.last = now;
  }
  if (b.tokens < 1.0) {
    return false;
  }
  b.tokens -= 1.0;
  return true;
}

void EventRecorder::enqueueLocked(Op op) {
  if (pending_.size() >= options_.max_pending) {
    ++stats_.dropped_queue_full;
    return;
  }
  pending_.push_back(std::move(op));
  cv_.notify_all();
}

void EventRecorder::event(const Json& regarding, EventType type, std::string_view reason,
                          std::string_view action, std::string_view note) {
  const std::string type_name = type == EventType::Warning ? "Warning" : "Normal";
  const std::string kind = regarding.value("kind", std::string());
  const std::string name = kube::object::name(regarding);
  const std::string namespace_name = kube::object::namespaceName(regarding);
  const std::string uid = kube::object::uid(regarding);
  const std::string note_text = cut(note, kMaxNote);
  const std::string object_key = kind + "/" + namespace_name + "/" + name + "/" + uid;
  const std::string key = object_key + "\x1f" + type_name + "\x1f" + std::string(reason) + "\x1f" +
                          std::string(action) + "\x1f" + note_text + "\x1f" +
                          options_.reporting_controller;

  std::lock_guard<std::mutex> guard(mutex_);
  const Clock::TimePoint now = clock_.now();
  const Clock::WallTime wall = clock_.wallNow();
  auto existing = series_.find(key);
  if (existing != series_.end() && now - existing->second.last_seen < options_.series_window) {
    Series& s = existing->second;
    ++s.count;
    s.last_seen = now;
    s.last_seen_wall = wall;
    ++stats_.aggregated;
    if (s.count == 2 && !s.event_name.empty()) {
      // The second occurrence makes the Event a series at once; later ones wait for a flush.
      s.flushed_count = 2;
      enqueueLocked(Op{Op::PatchSeries, key, Json()});
    }
    return;
  }
  if (!takeToken(object_key, now)) {
    ++stats_.dropped_rate_limited;
    return;
  }
  const std::string event_ns = namespace_name.empty() ? "default" : namespace_name;
  char suffix[32];
  std::snprintf(
      suffix, sizeof(suffix), ".%llx",
      static_cast<unsigned long long>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count()));
  Json regarding_ref = Json::object();
  regarding_ref["apiVersion"] = regarding.value("apiVersion", std::string());
  regarding_ref["kind"] = kind;
  if (!namespace_name.empty()) {
    regarding_ref["namespace"] = namespace_name;
  }
  regarding_ref["name"] = name;
  if (!uid.empty()) {
    regarding_ref["uid"] = uid;
  }
  const std::string rv = kube::object::resourceVersion(regarding);
  if (!rv.empty()) {
    regarding_ref["resourceVersion"] = rv;
  }
  Json body = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", name + suffix}, {"namespace", event_ns}}},
      {"eventTime", kube::formatMicroTime(wall)},
      {"reportingController", options_.reporting_controller},
      {"reportingInstance", options_.reporting_instance},
      {"action", cut(action, 128)},
      {"reason", cut(reason, 128)},
      {"note", note_text},
      {"type", type_name},
      {"regarding", std::move(regarding_ref)},
  };
  Series s;
  s.namespace_name = event_ns;
  s.event_name = body["metadata"]["name"].get<std::string>();
  s.last_seen = now;
  s.last_seen_wall = wall;
  series_[key] = std::move(s);
  enqueueLocked(Op{Op::Create, key, std::move(body)});
}

void EventRecorder::flushSeriesLocked(std::deque<Op>& out, bool all) {
  const Clock::TimePoint now = clock_.now();
  for (auto it = series_.begin(); it != series_.end();) {
    Series& s = it->second;
    if (s.count > s.flushed_count && !s.event_name.empty()) {
      s.flushed_count = s.count;
      out.push_back(Op{Op::PatchSeries, it->first, Json()});
    }
    if (!all && now - s.last_seen >= options_.series_window) {
      it = series_.erase(it);  // finished series
    } else {
      ++it;
    }
  }
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    // A full bucket carries no information.
    const double elapsed = std::chrono::duration<double>(now - it->second.last).count();
    const double per_second = 1.0 / std::chrono::duration<double>(options_.refill_every).count();
    if (it->second.tokens + elapsed * per_second >= options_.burst) {
      it = buckets_.erase(it);
    } else {
      ++it;
    }
  }
}

void EventRecorder::send(const Op& op) {
  if (op.kind == Op::Create) {
    const std::string namespace_name = op.body["metadata"]["namespace"].get<std::string>();
    kube::Api api(client_, kube::resources::events(), namespace_name);
    auto created = api.create(op.body);
    std::lock_guard<std::mutex> guard(mutex_);
    if (created.ok()) {
      ++stats_.created;
    } else {
      ++stats_.failed;
      // The Event does not exist: forget its series, so the next occurrence creates one again
      // instead of being counted onto (and patched into) an Event that never was.
      auto it = series_.find(op.key);
      if (it != series_.end() &&
          it->second.event_name == op.body["metadata"]["name"].get<std::string>()) {
        series_.erase(it);
      }
      spdlog::warn("events: cannot create {} ({}): {}", op.body["metadata"]["name"].dump(),
                   op.body["reason"].get<std::string>(), created.error().describe());
    }
    return;
  }
  std::string namespace_name;
  std::string name;
  Json patch;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = series_.find(op.key);
    if (it == series_.end()) {
      return;
    }
    namespace_name = it->second.namespace_name;
    name = it->second.event_name;
    patch = {{"series",
              {{"count", it->second.count},
               {"lastObservedTime", kube::formatMicroTime(it->second.last_seen_wall)}}}};
  }
  kube::Api api(client_, kube::resources::events(), namespace_name);
  auto patched = api.patch(name, kube::MergePatch{std::move(patch)});
  std::lock_guard<std::mutex> guard(mutex_);
  if (patched.ok()) {
    ++stats_.series_patches;
  } else {
    ++stats_.failed;
    spdlog::warn("events: cannot update the series of {}/{}: {}", namespace_name, name,
                 patched.error().describe());
  }
}

void EventRecorder::run(std::stop_token stop) {
  Clock::TimePoint next_flush = clock_.now() + options_.flush_period;
  while (true) {
    std::deque<Op> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      clock_.waitUntil(cv_, lock, stop, next_flush, [this] { return !pending_.empty(); });
      const bool stopping = stop.stop_requested();
      batch.swap(pending_);
      if (stopping || clock_.now() >= next_flush) {
        flushSeriesLocked(batch, stopping);
        next_flush = clock_.now() + options_.flush_period;
      }
      sending_ = !batch.empty();
      if (batch.empty() && stopping) {
        cv_.notify_all();
        return;
      }
    }
    for (const Op& op : batch) {
      send(op);
    }
    {
      std::lock_guard<std::mutex> guard(mutex_);
      sending_ = false;
      cv_.notify_all();
    }
    if (stop.stop_requested()) {
      // One last pass sends what arrived meanwhile, then the loop returns.
      std::lock_guard<std::mutex> guard(mutex_);
      if (pending_.empty()) {
        return;
      }
    }
  }
}

void EventRecorder::flushForTest() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [this] { return pending_.empty() && !sending_; });
}

}  // namespace kvc::runtime
