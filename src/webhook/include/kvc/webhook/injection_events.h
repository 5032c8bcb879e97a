#pragma once
// Events about injection decisions, as users of Istio and Linkerd expect: a Normal
// `KVCacheInjected` or a Warning `KVCacheInjectionRefused` on the Pod's owning workload — the
// Deployment behind a ReplicaSet, else the controller owner — or, for a bare Pod, on the Pod by
// name in its namespace.
//
// Never blocks admission: decisions are queued and a worker thread resolves the owner (one
// cached read of a ReplicaSet) and hands the Event to the rate-limited, deduplicating
// EventRecorder. Skipped on dry-run (the webhook is registered with sideEffects NoneOnDryRun).

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "kvc/kube/client.h"
#include "kvc/runtime/events.h"
#include "kvc/webhook/pod_handlers.h"

namespace kvc::webhook {

class InjectionEvents : public InjectionObserver {
public:
  // `recorder` (the manager's) must outlive this object.
  InjectionEvents(kube::ClientPtr client, runtime::EventRecorder& recorder,
                  std::size_t max_queued = 1000);
  ~InjectionEvents() override;
  InjectionEvents(const InjectionEvents&) = delete;
  InjectionEvents& operator=(const InjectionEvents&) = delete;

  void onInjection(const AdmissionRequest& request, const policy::Decision& decision,
                   std::chrono::nanoseconds elapsed) override;

  void stop();
  // Blocks until the queue is drained (tests).
  void flushForTest();

private:
  struct Pending {
    Json pod;  // metadata only
    std::string namespace_name;
    bool refused = false;
    std::string reason;
    std::string note;
  };
  void run();
  Json regardingFor(const Pending& pending);

  kube::ClientPtr client_;
  runtime::EventRecorder& recorder_;
  std::size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Pending> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::map<std::string, Json> replica_set_owners_;  // "ns/name" -> owner reference (or null)
  std::thread worker_;
};

}  // namespace kvc::webhook
