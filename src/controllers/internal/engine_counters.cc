#include "internal/engine_counters.h"

#include <variant>

#include "kvc/kube/object.h"
#include "kvc/kube/time.h"
#include "kvc/policy/usage/engine_target.h"

namespace kvc::controllers::internal {

void EngineCounterBook::record(const std::string& pod_key, EngineReading reading) {
  std::lock_guard<std::mutex> guard(mutex_);
  readings_[pod_key] = std::move(reading);
}

void EngineCounterBook::forget(const std::string& pod_key) {
  std::lock_guard<std::mutex> guard(mutex_);
  readings_.erase(pod_key);
}

std::optional<EngineReading> EngineCounterBook::find(const std::string& pod_key) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = readings_.find(pod_key);
  return it == readings_.end() ? std::nullopt : std::optional<EngineReading>(it->second);
}

std::size_t EngineCounterBook::size() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return readings_.size();
}

runtime::ObjectPtr EngineCounterReader::podOf(const std::string& key) const {
  for (const runtime::Cache* cache : {config_.sources.held_pods, config_.sources.replica_pods}) {
    if (cache != nullptr) {
      if (runtime::ObjectPtr pod = cache->get(key)) {
        return pod;
      }
    }
  }
  return nullptr;
}

EngineReading EngineCounterReader::read(const std::string& url, const std::string& engine) const {
  EngineReading reading;
  reading.url = url;
  reading.read_at = config_.clock->now();
  store::HttpRequest request;
  request.url = url;
  request.timeout = config_.timeout;
  request.max_body_bytes = kEngineMetricsMaxBytes;
  auto answer = config_.http->send(request);
  if (!answer.ok()) {
    reading.unread = "GET " + url + ": " + answer.error().message();
    return reading;
  }
  if (answer->status != 200) {
    reading.unread = "GET " + url + " answered " + std::to_string(answer->status);
    return reading;
  }
  auto counts = policy::engineCounts(answer->body, engine);
  if (!counts.ok()) {
    reading.unread = url + " has " + counts.status().message();
    return reading;
  }
  reading.counts = *counts;
  return reading;
}

Result<runtime::Action> EngineCounterReader::reconcile(const runtime::Request& request,
                                                       std::stop_token) {
  const std::string key = request.key();
  const api::Settings settings = config_.settings ? config_.settings() : api::Settings{};
  runtime::ObjectPtr pod = podOf(key);
  const std::string engine = pod ? engineOf(config_.sources, *pod) : std::string();
  if (!pod || engine.empty() || !settings.engine_metrics) {
    config_.book->forget(key);
    // Reading off: looked at again at the resync, so that turning it on needs no Pod event.
    return pod && !engine.empty() ? runtime::Action::requeueAfter(config_.resync)
                                  : runtime::Action::done();
  }
  auto target = policy::engineMetricsTarget(*pod, engine);
  if (std::holds_alternative<std::string>(target)) {
    config_.book->forget(key);  // read again once it is Ready (a Pod event)
    return runtime::Action::done();
  }
  const std::string& url = std::get<policy::EngineTarget>(target).url;
  const std::string uid = kube::object::uid(*pod);
  // At most once per resync: an event on the Pod between two reads does not read it again.
  if (auto last = config_.book->find(key); last && last->uid == uid && last->url == url) {
    const Clock::Duration since = config_.clock->now() - last->read_at;
    if (since < config_.resync) {
      return runtime::Action::requeueAfter(config_.resync - since);
    }
  }
  EngineReading reading = read(url, engine);
  reading.uid = uid;
  config_.book->record(key, std::move(reading));
  return runtime::Action::requeueAfter(config_.resync);
}

}  // namespace kvc::controllers::internal

namespace kvc::controllers::internal {

policy::BindingUse bindingUseOf(const EnginePodSources& sources, const EngineCounterBook& book,
                                const api::Settings& settings, const std::string& binding_key,
                                Clock::WallTime now) {
  policy::BindingUse use;
  use.reading = settings.engine_metrics;
  use.unused_after = settings.unused_after;
  for (const EnginePod& engine_pod : enginePodsOf(sources, binding_key)) {
    const Json& pod = *engine_pod.pod;
    const std::optional<std::string> since = policy::readySince(pod);
    if (!since) {
      continue;
    }
    policy::EnginePodUse entry;
    entry.name = kube::object::name(pod);
    entry.engine = engine_pod.engine;
    if (auto parsed = kube::parseTime(*since); parsed.ok()) {
      entry.ready_seconds = std::max<std::int64_t>(
          0, std::chrono::duration_cast<std::chrono::seconds>(now - *parsed).count());
    }
    const std::string key = kube::object::namespaceName(pod) + "/" + entry.name;
    if (auto reading = book.find(key); reading && reading->uid == kube::object::uid(pod)) {
      entry.counts = reading->counts;
      entry.unread = reading->unread;
      entry.visited = true;
    }
    use.pods.push_back(std::move(entry));
  }
  return use;
}

}  // namespace kvc::controllers::internal
