#include "kvc/runtime/informer.h"

#include <spdlog/spdlog.h>

#include <map>
#include <utility>

#include "kvc/kube/object.h"
#include "kvc/runtime/allocator.h"

namespace kvc::runtime {
namespace {

constexpr const char* kLastApplied = "kubectl.kubernetes.io/last-applied-configuration";

std::vector<std::string> splitPointer(const std::string& pointer) {
  std::vector<std::string> tokens;
  std::size_t pos = 0;
  if (!pointer.empty() && pointer[0] == '/') {
    pos = 1;
  }
  while (pos <= pointer.size()) {
    const std::size_t slash = pointer.find('/', pos);
    std::string token =
        pointer.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    // RFC 6901 unescaping: ~1 is '/', ~0 is '~'.
    std::string unescaped;
    for (std::size_t i = 0; i < token.size(); ++i) {
      const bool escape =
          token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1');
      if (escape) {
        unescaped += token[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        unescaped += token[i];
      }
    }
    tokens.push_back(std::move(unescaped));
    if (slash == std::string::npos) {
      break;
    }
    pos = slash + 1;
  }
  return tokens;
}

// Copies the part of `src` that `tokens[i..]` selects into `dst`; "*" walks every array element.
void project(const Json& src, const std::vector<std::string>& tokens, std::size_t i, Json& dst) {
  if (i == tokens.size()) {
    dst = src;
    return;
  }
  const std::string& token = tokens[i];
  if (token == "*" && src.is_array()) {
    if (!dst.is_array()) {
      dst = Json::array();
    }
    for (std::size_t k = 0; k < src.size(); ++k) {
      if (dst.size() <= k) {
        dst.push_back(src[k].is_object() ? Json::object() : Json());
      }
      project(src[k], tokens, i + 1, dst[k]);
    }
    return;
  }
  if (src.is_object()) {
    auto it = src.find(token);
    if (it == src.end()) {
      return;
    }
    if (!dst.is_object()) {
      dst = Json::object();
    }
    project(*it, tokens, i + 1, dst[token]);
  }
}

}  // namespace

void stripForCache(Json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return;
  }
  meta->erase("managedFields");
  auto annotations = meta->find("annotations");
  if (annotations != meta->end() && annotations->is_object()) {
    annotations->erase(kLastApplied);
    if (annotations->empty()) {
      meta->erase("annotations");
    }
  }
}

Transform stripTransform() { return Transform{"strip", &stripForCache}; }

Transform keepFields(std::vector<std::string> json_pointers) {
  std::string id = "keep:";
  for (std::size_t i = 0; i < json_pointers.size(); ++i) {
    id += (i == 0 ? "" : ",") + json_pointers[i];
  }
  std::vector<std::vector<std::string>> paths;
  static const char* const kIdentity[] = {
      "/apiVersion",          "/kind",
      "/metadata/name",       "/metadata/namespace",
      "/metadata/uid",        "/metadata/resourceVersion",
      "/metadata/generation", "/metadata/deletionTimestamp",
      "/metadata/labels",     "/metadata/ownerReferences",
      "/metadata/finalizers",
  };
  for (const char* p : kIdentity) {
    paths.push_back(splitPointer(p));
  }
  for (const std::string& p : json_pointers) {
    paths.push_back(splitPointer(p));
  }
  return Transform{std::move(id), [paths = std::move(paths)](Json& object) {
                     stripForCache(object);
                     Json out = Json::object();
                     for (const auto& tokens : paths) {
                       project(object, tokens, 0, out);
                     }
                     object = std::move(out);
                   }};
}

Informer::Informer(kube::ClientPtr client, InformerOptions options, const Clock& clock)
    : api_(std::move(client), options.resource, options.namespace_name),
      options_(std::move(options)),
      clock_(clock) {}

Informer::~Informer() { stop(); }

void Informer::addIndex(const std::string& name, IndexFunc fn) {
  store_.addIndex(name, std::move(fn));
}

bool Informer::hasIndex(const std::string& name) const { return store_.hasIndex(name); }

void Informer::addEventHandler(EventHandler handler) { handlers_.push_back(std::move(handler)); }

void Informer::start() {
  if (started_) {
    return;
  }
  started_ = true;
  // The first resync deadline is set here, not on the dispatcher thread, so that it counts from
  // start() however late that thread runs.
  const Clock::TimePoint first_resync = options_.resync_period > Clock::Duration::zero()
                                            ? clock_.now() + options_.resync_period
                                            : Clock::TimePoint::max();
  dispatcher_ =
      std::jthread([this, first_resync](std::stop_token stop) { dispatch(stop, first_resync); });
  reflector_ = std::jthread([this](std::stop_token stop) { reflect(stop); });
}

void Informer::stop() {
  if (reflector_.joinable()) {
    reflector_.request_stop();
    reflector_.join();
  }
  if (dispatcher_.joinable()) {
    dispatcher_.request_stop();
    dispatcher_.join();
  }
}

bool Informer::waitForSync(std::chrono::milliseconds timeout, std::stop_token stop) const {
  std::unique_lock<std::mutex> lock(sync_mutex_);
  return sync_cv_.wait_for(lock, stop, timeout, [this] { return synced_.load(); });
}

InformerStats Informer::stats() const {
  std::lock_guard<std::mutex> guard(stats_mutex_);
  return stats_;
}

void Informer::prepare(Json& object) const {
  if (!object.contains("apiVersion")) {
    object["apiVersion"] = options_.resource.apiVersion();
  }
  if (!object.contains("kind")) {
    object["kind"] = options_.resource.kind;
  }
  options_.transform(object);
}

void Informer::push(Note note) {
  std::lock_guard<std::mutex> guard(notes_mutex_);
  notes_.push_back(std::move(note));
  notes_cv_.notify_all();
}

void Informer::push(std::vector<Note> notes) {
  std::lock_guard<std::mutex> guard(notes_mutex_);
  for (Note& note : notes) {
    notes_.push_back(std::move(note));
  }
  notes_cv_.notify_all();
}

kube::ApiStatus Informer::listAndReplace(std::stop_token stop, bool initial) {
  kube::ListParams params;
  params.label_selector = options_.label_selector;
  params.field_selector = options_.field_selector;
  params.limit = options_.page_size;
  std::vector<Note> notes;
  std::string list_version;
  // Page by page, item by item: parse, transform, pack, stage; only packed objects outlive
  // their item, so a relist of thousands of objects neither peaks nor fragments the heap.
  auto stage = [&](Json&& item) {
    prepare(item);
    const std::string key = kube::object::key(item);
    Packed packed = packObject(item);
    const std::string old_version = store_.version(key);
    if (old_version.empty()) {
      notes.push_back(Note{NoteType::Add, {}, {nullptr, packed}, initial});
    } else if (old_version != kube::object::resourceVersion(item)) {
      notes.push_back(
          Note{NoteType::Update, {nullptr, store_.getPacked(key)}, {nullptr, packed}, false});
    }
    store_.stage(key, item, std::move(packed));
  };
  while (true) {
    auto page = api_.listEach(params, stage, stop);
    if (!page.ok()) {
      if (page.error().isGone() && !params.continue_token.empty()) {
        // The continue token expired mid-list: start the list over.
        spdlog::info("informer {}: continue token expired, listing again",
                     options_.resource.qualifiedName());
        notes.clear();
        store_.discardStaged();
        params.continue_token.clear();
        continue;
      }
      store_.discardStaged();
      return page.error();
    }
    list_version = page->resource_version;
    if (page->continue_token.empty()) {
      break;
    }
    params.continue_token = page->continue_token;
  }
  for (auto& [key, packed] : store_.commitStaged()) {
    notes.push_back(Note{NoteType::Delete, {}, {nullptr, std::move(packed)}, true});
  }
  if (initial) {
    notes.push_back(Note{NoteType::Synced, {}, {}, false});
  }
  resource_version_ = list_version;
  {
    std::lock_guard<std::mutex> guard(stats_mutex_);
    ++stats_.lists;
    stats_.resource_version = list_version;
  }
  push(std::move(notes));
  // The list's parse garbage is free now; give it back rather than keep the peak resident.
  releaseFreeMemory();
  return kube::Done{};
}

Informer::WatchOutcome Informer::watchOnce(std::stop_token stop,
                                           std::optional<kube::ApiError>& error) {
  kube::WatchParams params;
  params.label_selector = options_.label_selector;
  params.field_selector = options_.field_selector;
  params.resource_version = resource_version_;
  params.allow_bookmarks = true;
  const auto min = options_.min_watch_timeout.count();
  params.timeout_seconds =
      min + static_cast<std::int64_t>(options_.random() * static_cast<double>(min));
  {
    std::lock_guard<std::mutex> guard(stats_mutex_);
    ++stats_.watches;
  }
  WatchOutcome outcome = WatchOutcome::Closed;
  auto result = api_.watch(
      params,
      [&](kube::WatchEvent&& event) {
        switch (event.type) {
          case kube::WatchEventType::Added:
          case kube::WatchEventType::Modified: {
            std::string version = kube::object::resourceVersion(event.object);
            prepare(event.object);
            const std::string key = kube::object::key(event.object);
            Packed packed = packObject(event.object);
            Packed old = store_.upsert(key, event.object, std::move(packed));
            auto object = std::make_shared<const Json>(std::move(event.object));
            if (old) {
              push(Note{NoteType::Update,
                        {nullptr, std::move(old)},
                        {std::move(object), nullptr},
                        false});
            } else {
              push(Note{NoteType::Add, {}, {std::move(object), nullptr}, false});
            }
            resource_version_ = std::move(version);
            break;
          }
          case kube::WatchEventType::Deleted: {
            std::string version = kube::object::resourceVersion(event.object);
            prepare(event.object);
            store_.remove(kube::object::key(event.object));
            // Handlers get the final state the event carried, not the last one cached.
            push(Note{NoteType::Delete,
                      {},
                      {std::make_shared<const Json>(std::move(event.object)), nullptr},
                      false});
            resource_version_ = std::move(version);
            break;
          }
          case kube::WatchEventType::Bookmark: {
            resource_version_ = kube::object::resourceVersion(event.object);
            std::lock_guard<std::mutex> guard(stats_mutex_);
            ++stats_.bookmarks;
            stats_.resource_version = resource_version_;
            return !stop.stop_requested();
          }
          case kube::WatchEventType::Error: {
            kube::ApiError e = kube::errorFromStatus(event.object);
            outcome = e.isGone() ? WatchOutcome::Gone : WatchOutcome::Failed;
            error = std::move(e);
            return false;
          }
        }
        std::lock_guard<std::mutex> guard(stats_mutex_);
        ++stats_.events;
        stats_.resource_version = resource_version_;
        return !stop.stop_requested();
      },
      stop);
  if (!result.ok()) {
    if (result.error().reason() == kube::ErrorReason::Cancelled || stop.stop_requested()) {
      return WatchOutcome::Stopped;
    }
    error = result.error();
    return result.error().isGone() ? WatchOutcome::Gone : WatchOutcome::Failed;
  }
  if (stop.stop_requested()) {
    return WatchOutcome::Stopped;
  }
  return outcome;
}

void Informer::reflect(std::stop_token stop) {
  const std::string name = options_.resource.qualifiedName();
  Backoff backoff(options_.backoff_initial, options_.backoff_max, 2.0, 1.0, options_.random);
  bool need_list = true;
  bool initial = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      auto listed = listAndReplace(stop, initial);
      if (!listed.ok()) {
        if (stop.stop_requested()) {
          return;
        }
        Clock::Duration wait = backoff.next();
        if (listed.error().retryAfter()) {
          wait = std::max<Clock::Duration>(wait, *listed.error().retryAfter());
        }
        spdlog::warn("informer {}: list failed, retrying in {} ms: {}", name,
                     std::chrono::duration_cast<std::chrono::milliseconds>(wait).count(),
                     listed.error().describe());
        clock_.sleepFor(stop, wait);
        continue;
      }
      spdlog::debug("informer {}: listed {} objects at resourceVersion {}", name, store_.size(),
                    resource_version_);
      need_list = false;
      initial = false;
      backoff.reset();
    }
    std::optional<kube::ApiError> error;
    const std::uint64_t events_before = stats().events + stats().bookmarks;
    const WatchOutcome outcome = watchOnce(stop, error);
    if (stats().events + stats().bookmarks > events_before) {
      backoff.reset();      // the watch worked for a while: start backing off from the beginning
      releaseFreeMemory();  // the events' parse garbage of the last 5-10 minutes
    }
    switch (outcome) {
      case WatchOutcome::Stopped:
        return;
      case WatchOutcome::Closed:
        backoff.reset();
        break;
      case WatchOutcome::Gone: {
        spdlog::info("informer {}: resourceVersion {} is gone ({}); relisting", name,
                     resource_version_, error ? error->message() : std::string("410"));
        std::lock_guard<std::mutex> guard(stats_mutex_);
        ++stats_.relists_on_gone;
        need_list = true;
        break;
      }
      case WatchOutcome::Failed: {
        {
          std::lock_guard<std::mutex> guard(stats_mutex_);
          ++stats_.watch_failures;
        }
        // Connection trouble and throttling resume the watch; anything else relists.
        const bool resume = error && (error->reason() == kube::ErrorReason::Transport ||
                                      error->reason() == kube::ErrorReason::Deadline ||
                                      error->isTooManyRequests() || error->isTimeout() ||
                                      error->reason() == kube::ErrorReason::ServiceUnavailable);
        Clock::Duration wait = backoff.next();
        if (error && error->retryAfter()) {
          wait = std::max<Clock::Duration>(wait, *error->retryAfter());
        }
        spdlog::warn("informer {}: watch failed ({}); {} in {} ms", name,
                     error ? error->describe() : std::string("unknown error"),
                     resume ? "watching again" : "relisting",
                     std::chrono::duration_cast<std::chrono::milliseconds>(wait).count());
        need_list = !resume;
        clock_.sleepFor(stop, wait);
        break;
      }
    }
  }
}

void Informer::guarded(const char* what, const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> guard(stats_mutex_);
      ++stats_.handler_failures;
    }
    spdlog::error("informer {}: an {} handler threw: {}", options_.resource.qualifiedName(), what,
                  e.what());
  } catch (...) {
    {
      std::lock_guard<std::mutex> guard(stats_mutex_);
      ++stats_.handler_failures;
    }
    spdlog::error("informer {}: an {} handler threw", options_.resource.qualifiedName(), what);
  }
}

void Informer::deliver(const Note& note) {
  switch (note.type) {
    case NoteType::Add: {
      const ObjectPtr object = note.object.get();
      if (!object) {
        return;
      }
      for (const EventHandler& h : handlers_) {
        if (h.on_add) {
          guarded("add", [&] { h.on_add(object, note.flag); });
        }
      }
      break;
    }
    case NoteType::Update: {
      const ObjectPtr old_object = note.old_object.get();
      const ObjectPtr object = note.object.get();
      if (!object || !old_object) {
        return;
      }
      for (const EventHandler& h : handlers_) {
        if (h.on_update) {
          guarded("update", [&] { h.on_update(old_object, object); });
        }
      }
      break;
    }
    case NoteType::Delete: {
      const ObjectPtr object = note.object.get();
      if (!object) {
        return;
      }
      for (const EventHandler& h : handlers_) {
        if (h.on_delete) {
          guarded("delete", [&] { h.on_delete(object, note.flag); });
        }
      }
      break;
    }
    case NoteType::Synced: {
      std::lock_guard<std::mutex> guard(sync_mutex_);
      synced_ = true;
      sync_cv_.notify_all();
      break;
    }
  }
}

void Informer::dispatch(std::stop_token stop, Clock::TimePoint next_resync) {
  const bool resync = options_.resync_period > Clock::Duration::zero();
  while (!stop.stop_requested()) {
    std::deque<Note> batch;
    {
      std::unique_lock<std::mutex> lock(notes_mutex_);
      clock_.waitUntil(notes_cv_, lock, stop, next_resync, [this] { return !notes_.empty(); });
      if (stop.stop_requested()) {
        return;
      }
      batch.swap(notes_);
    }
    for (const Note& note : batch) {
      deliver(note);
    }
    if (resync && clock_.now() >= next_resync) {
      // The next period starts now, before the handlers run: a handler that takes long does
      // not stretch the period, and whoever watches the handlers (a test's clock) sees the next
      // deadline already set when the last handler returns.
      next_resync = clock_.now() + options_.resync_period;
      if (synced_) {
        for (const ObjectPtr& object : store_.list()) {
          for (const EventHandler& h : handlers_) {
            if (h.on_update) {
              guarded("update", [&] { h.on_update(object, object); });
            }
          }
        }
      }
    }
  }
}

}  // namespace kvc::runtime
