#pragma once
// A small in-memory API server for the controllers' unit tests (STYLE.md §5): many resources at
// once, served through a FakeApiServer, with the informer caches a controller reads kept in step.
//
//   FakeCluster cluster(clock);
//   FakeApiServer server;
//   server.setHandler(cluster.handler());
//   runtime::Store& pools = cluster.cache(kube::resources::kvCachePools());
//   cluster.create(kube::resources::kvCachePools(), pool_json);
//
// What it serves, on /api/v1/… and /apis/<group>/<version>/… (namespaced or not):
//   GET object, GET collection (labelSelector equalities, no paging), POST (409 AlreadyExists),
//   PUT (409 Conflict on a stale metadata.resourceVersion; status is kept), PUT …/status (only the
//   status changes; 409 on a stale resourceVersion), PATCH as JSON patch (a failed `test` is
//   422 Invalid), merge or strategic merge patch, and server-side apply (created when absent, else
//   the intent merged in; arrays replaced), DELETE (preconditions.uid, 409 on a mismatch; an
//   object with finalizers, or deleted in the Foreground, gets a deletionTimestamp — the
//   foreground one the finalizer foregroundDeletion, which stays until the test calls remove(),
//   as the garbage collector would; otherwise it goes at once). An object being deleted whose
//   last finalizer is removed goes. Every change gets the next resourceVersion of one
//   cluster-wide counter, and metadata.generation moves when .spec does.
//
// The caches: every store handed out by cache() is updated before the answer to the request that
// changed the object is sent (an informer that is never late), so a controller reading its cache
// after a write sees the write. Tests model lateness and concurrent writers with beforeNext().
//
// The I/O log: every request is logged as one line, "<VERB> <plural>/<key>[/<subresource>]"
// with VERB one of GET, LIST, CREATE, PUT, PATCH, APPLY, DELETE — e.g.
// "PATCH kvcachepools/shared-dram", "PUT kvcachepoolbindings/team-a/team-a/status",
// "APPLY configmaps/gpustack-system/mooncake-dram-tenant-quota-policy". A fake master may log
// into the same IoLog, so a test reads the order of all of a pass's I/O in one list.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_apiserver.h"
#include "kvc/common/clock.h"
#include "kvc/common/json.h"
#include "kvc/kube/resource.h"
#include "kvc/runtime/store.h"

namespace kvc::testing {

// One ordered list of I/O lines, written from any thread.
class IoLog {
public:
  void add(std::string line);
  std::vector<std::string> lines() const;
  // The lines that change something: CREATE, PUT, PATCH, APPLY, DELETE of the API, and the
  // master's PUT/DELETE ledger.
  std::vector<std::string> writes() const;
  // The lines for which `keep` holds.
  std::vector<std::string> filtered(const std::function<bool(const std::string&)>& keep) const;
  void clear();

private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

// True for a line of IoLog that changes something.
bool isWrite(const std::string& line);

class FakeCluster {
public:
  // `clock` stamps creationTimestamp and deletionTimestamp (its wall time).
  explicit FakeCluster(const Clock& clock);
  ~FakeCluster();

  FakeCluster(const FakeCluster&) = delete;
  FakeCluster& operator=(const FakeCluster&) = delete;

  // For FakeApiServer::setHandler.
  FakeHandler handler();
  void handle(const FakeRequest& request, ResponseWriter& out);

  // A cache of `resource` (in `namespace_name`, "" = all; matching the label `selector`), kept
  // in step with every change. Valid as long as the cluster; add indexes to it as an informer
  // would.
  runtime::Store& cache(const kube::ResourceType& resource, std::string namespace_name = "",
                        std::string selector = "");

  // Changes made by the test (as another client would make them), each mirrored into the caches
  // and not logged. `create` fills uid, creationTimestamp, generation and resourceVersion (keeping
  // what `object` sets); `update` stores `object` as given but with the next resourceVersion;
  // `modify` does a read-modify-write of the stored object; `remove` deletes at once (the garbage
  // collector, a kubelet) whatever the finalizers.
  Json create(const kube::ResourceType& resource, Json object);
  Json update(const kube::ResourceType& resource, Json object);
  Json modify(const kube::ResourceType& resource, const std::string& key,
              const std::function<void(Json&)>& change);
  void remove(const kube::ResourceType& resource, const std::string& key);
  std::optional<Json> get(const kube::ResourceType& resource, const std::string& key) const;
  std::vector<Json> list(const kube::ResourceType& resource) const;

  // The next `times` requests logged as `line` answer `status` (with a Status of `reason`)
  // without doing anything.
  void failNext(std::string line, int status, std::string reason = "InternalError", int times = 1);
  // Runs `action` just before the next request logged as `line` is served (a concurrent writer
  // that got there first). `action` may change objects through this cluster.
  void beforeNext(std::string line, std::function<void()> action);

  IoLog& log() { return *log_; }
  const std::shared_ptr<IoLog>& sharedLog() const { return log_; }

private:
  struct Target;
  struct Mirror {
    kube::ResourceType resource;
    std::string namespace_name;
    std::string selector;
    std::unique_ptr<runtime::Store> store;
  };
  struct Fault {
    std::string line;
    int status;
    std::string reason;
    int times;
  };
  struct Hook {
    std::string line;
    std::function<void()> action;
  };

  static std::string objectsKey(const kube::ResourceType& resource);
  Json stamp(const kube::ResourceType& resource, Json object);
  // Stores (or, with nullopt, removes) an object and mirrors it. Lock held.
  void put(const kube::ResourceType& resource, const std::string& key, std::optional<Json> object);
  // The object after a change by a client: generation, resourceVersion, and removal when it is
  // deleting without finalizers. Lock held. Returns the object as stored (or as it went).
  Json commit(const kube::ResourceType& resource, const std::string& key, const Json& before,
              Json after);
  void serve(const Target& target, const FakeRequest& request, ResponseWriter& out);

  const Clock& clock_;
  std::shared_ptr<IoLog> log_;
  mutable std::mutex mutex_;
  std::int64_t version_ = 1000;
  // objectsKey(resource) -> key -> object
  std::map<std::string, std::map<std::string, Json>> objects_;
  std::vector<Mirror> mirrors_;
  std::vector<Fault> faults_;
  std::vector<Hook> hooks_;
};

}  // namespace kvc::testing
