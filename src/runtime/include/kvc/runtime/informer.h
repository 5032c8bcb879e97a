#pragma once
// An informer: a cache of one resource kept in step with the API server by list-then-watch,
// with event handlers (client-go's SharedIndexInformer + Reflector; kube-rs watcher/reflector).
//
// Flow (one reflector thread, one dispatcher thread):
//   1. List in pages (consistent read), transform every object, replace the store, notify
//      handlers of what changed (adds, updates of objects whose resourceVersion moved, deletes
//      marked final-state-unknown), then mark the informer synced once handlers saw all that.
//   2. Watch from the list's resourceVersion with bookmarks; apply each event to the store and
//      notify. When the server ends the watch (its timeout), watch again from the last version
//      seen. A connection failure backs off (0.8 s doubling to 30 s, jittered) and watches
//      again from the same version. A 410 Gone / Expired (the version was compacted, or the
//      server restarted) relists at once. Any other error relists after backoff.
//   3. Every resync period (if set) the dispatcher re-delivers every cached object as an
//      update(old == new), so level-based controllers revisit everything.
//
// Handlers run on the dispatcher thread, one notification at a time, in order; they must be
// quick (enqueue a key). Register handlers and indexes before start(). A handler that throws is
// logged and counted (InformerStats::handler_failures); the others still run and the informer
// goes on.
//
// The transform runs on every object before it is cached: by default it drops
// metadata.managedFields and the kubectl last-applied annotation (stripForCache); a projection
// that keeps only the fields a controller reads (keepFields) saves far more memory.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "kvc/common/clock.h"
#include "kvc/kube/client.h"
#include "kvc/kube/resource.h"
#include "kvc/runtime/backoff.h"
#include "kvc/runtime/store.h"

namespace kvc::runtime {

struct EventHandler {
  // `in_initial_list`: the object came from the first list (informer not yet synced).
  std::function<void(const ObjectPtr& object, bool in_initial_list)> on_add;
  std::function<void(const ObjectPtr& old_object, const ObjectPtr& new_object)> on_update;
  // `object` is the object's final state as the watch's DELETED event carried it (transformed
  // like every cached object). `final_state_unknown`: the deletion was inferred from a relist,
  // so `object` is the last state the cache had (client-go's DeletedFinalStateUnknown).
  std::function<void(const ObjectPtr& object, bool final_state_unknown)> on_delete;
};

// Edits an object in place before it is cached. `id` says what it keeps, so that two requests
// for one shared informer can be told apart when they want different caches.
struct Transform {
  std::string id;
  std::function<void(Json& object)> apply;

  void operator()(Json& object) const {
    if (apply) {
      apply(object);
    }
  }
};

// Drops metadata.managedFields and the kubectl.kubernetes.io/last-applied-configuration
// annotation.
void stripForCache(Json& object);
// stripForCache as a Transform (id "strip"): the default.
Transform stripTransform();

// A transform that keeps only the given JSON pointers ("/spec/nodeName", "/status/phase") plus
// apiVersion, kind and the identity fields of metadata (name, namespace, uid,
// resourceVersion, generation, deletionTimestamp, labels, ownerReferences, finalizers), after
// stripForCache. A pointer to an object keeps the whole subtree. Its id lists the pointers.
Transform keepFields(std::vector<std::string> json_pointers);

struct InformerOptions {
  kube::ResourceType resource;
  std::string namespace_name;  // "" = all namespaces (or cluster-scoped)
  std::string label_selector;
  std::string field_selector;
  Clock::Duration resync_period{0};  // 0 = never
  Transform transform = stripTransform();
  std::int64_t page_size = 500;
  // Each watch asks the server to end it after a random time in [min, 2*min) (client-go).
  std::chrono::seconds min_watch_timeout{300};
  Clock::Duration backoff_initial = std::chrono::milliseconds(800);
  Clock::Duration backoff_max = std::chrono::seconds(30);
  RandomSource random = defaultRandom();
};

struct InformerStats {
  std::uint64_t lists = 0;            // successful full lists (initial + relists)
  std::uint64_t relists_on_gone = 0;  // relists caused by 410 Gone / Expired
  std::uint64_t watches = 0;          // watch requests started
  std::uint64_t watch_failures = 0;   // watches that ended in an error (not 410)
  std::uint64_t events = 0;           // watch events applied (bookmarks excluded)
  std::uint64_t bookmarks = 0;
  std::uint64_t handler_failures = 0;  // handlers that threw
  std::string resource_version;        // last version seen
};

class Informer {
public:
  Informer(kube::ClientPtr client, InformerOptions options, const Clock& clock = realClock());
  ~Informer();

  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  const kube::ResourceType& resource() const { return options_.resource; }
  const InformerOptions& options() const { return options_; }

  // Before start().
  void addIndex(const std::string& name, IndexFunc fn);
  // Whether an index of that name was added (informers are shared: the first to ask adds it).
  bool hasIndex(const std::string& name) const;
  void addEventHandler(EventHandler handler);

  void start();
  // Stops both threads (prompt: the watch is cancelled). Idempotent.
  void stop();

  // The first list has been cached and delivered to every handler.
  bool hasSynced() const { return synced_.load(); }
  // Waits up to `timeout` (real time) for hasSynced(); false on timeout or stop.
  bool waitForSync(std::chrono::milliseconds timeout, std::stop_token stop = {}) const;

  const Cache& cache() const { return store_; }
  InformerStats stats() const;

private:
  enum class NoteType { Add, Update, Delete, Synced };
  // An object for a handler: already parsed (watch events), or packed and parsed on delivery
  // (a list's objects, old versions), so a burst of notes does not hold parsed trees.
  struct NoteObject {
    ObjectPtr parsed;
    Packed packed;
    ObjectPtr get() const { return parsed ? parsed : unpackObject(packed); }
  };
  struct Note {
    NoteType type;
    NoteObject old_object;
    NoteObject object;
    bool flag = false;  // in_initial_list / final_state_unknown
  };
  enum class WatchOutcome { Closed, Gone, Failed, Stopped };

  void reflect(std::stop_token stop);
  kube::ApiStatus listAndReplace(std::stop_token stop, bool initial);
  WatchOutcome watchOnce(std::stop_token stop, std::optional<kube::ApiError>& error);
  // Fills apiVersion/kind when a list left them out, then applies the transform.
  void prepare(Json& object) const;

  void dispatch(std::stop_token stop, Clock::TimePoint next_resync);
  void push(Note note);
  void push(std::vector<Note> notes);
  void deliver(const Note& note);
  // Runs one handler call behind the exception boundary.
  void guarded(const char* what, const std::function<void()>& call);

  kube::Api api_;
  InformerOptions options_;
  const Clock& clock_;
  Store store_;
  std::vector<EventHandler> handlers_;

  mutable std::mutex stats_mutex_;
  InformerStats stats_;
  std::string resource_version_;  // reflector thread only

  std::mutex notes_mutex_;
  std::condition_variable_any notes_cv_;
  std::deque<Note> notes_;

  std::atomic<bool> synced_{false};
  mutable std::mutex sync_mutex_;
  mutable std::condition_variable_any sync_cv_;

  std::jthread reflector_;
  std::jthread dispatcher_;
  bool started_ = false;
};

using InformerPtr = std::shared_ptr<Informer>;

}  // namespace kvc::runtime
