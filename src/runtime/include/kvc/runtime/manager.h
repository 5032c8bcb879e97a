#pragma once
// The manager (controller-runtime's manager.go): owns the informers, the controllers, the
// leader elector and the probe/metrics server, and runs them in the right order.
//
//   start:    probe and metrics servers; the Event recorder; informers (on every replica, so
//             caches are warm when a standby takes over); then, if leader election is on,
//             campaign for the Lease.
//   elected:  wait for every informer to sync, then start the controllers.
//   SIGTERM:  (the caller requests `stop`) stop the controllers and let running reconciles
//             finish, *then* release the Lease (so nothing guarded by it still runs), stop the
//             informers and the servers. run() returns ok.
//   lost:     leadership lost (the Lease could not be renewed within the renew deadline):
//             stop everything and return Unavailable; the process must exit so that a fresh
//             start re-syncs its state (controller-runtime exits too).
//
// Endpoints: /healthz (fails when this replica leads but its renewals are overdue by more
// than LeaseDuration + 20 s), /readyz (fails until every informer has synced, and once
// shutdown began), /metrics (Prometheus text; leader_election_master_status, work queue,
// reconcile and REST client metrics). Health and metrics may share one address.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "kvc/common/clock.h"
#include "kvc/common/status.h"
#include "kvc/kube/client.h"
#include "kvc/runtime/controller.h"
#include "kvc/runtime/events.h"
#include "kvc/runtime/http_server.h"
#include "kvc/runtime/informer.h"
#include "kvc/runtime/leader_election.h"
#include "kvc/runtime/metrics.h"

namespace kvc::runtime {

struct ManagerOptions {
  std::string name = "kvcache-operator";
  std::string namespace_name = "gpustack-system";  // where the Lease lives
  bool leader_elect = true;
  std::string lease_name = "kvcache-operator";
  std::string identity;  // default: hostname_pid
  Clock::Duration lease_duration = std::chrono::seconds(15);
  Clock::Duration renew_deadline = std::chrono::seconds(10);
  Clock::Duration retry_period = std::chrono::seconds(2);
  std::string health_address = "127.0.0.1:8081";   // "0" disables
  std::string metrics_address = "127.0.0.1:8080";  // "0" disables; may equal health_address
  std::chrono::milliseconds sync_timeout{120000};  // informers must sync within this
};

class Manager {
public:
  static Result<std::unique_ptr<Manager>> create(kube::ClientPtr client, ManagerOptions options,
                                                 const Clock& clock = realClock());
  ~Manager();

  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  const kube::ClientPtr& client() const { return client_; }
  Registry& metrics() { return *registry_; }
  // The one Event recorder of the process (controllers and webhooks alike), reporting as this
  // replica's identity. Events recorded before run() wait in its queue.
  EventRecorder& events() { return *events_; }
  const ManagerOptions& options() const { return options_; }
  const std::string& identity() const { return options_.identity; }

  // Registration (before run()).
  void addInformer(InformerPtr informer);
  void addController(std::shared_ptr<Controller> controller);
  // A shared informer per (resource, namespace, selectors): created on first request; later
  // requests get the same informer. A later request that wants another cache of it (another
  // transform id, another resync period) is refused with InvalidArgument instead of silently
  // getting the first one's.
  Result<InformerPtr> informerFor(const InformerOptions& options);

  // Runs until `stop` is requested (ok) or leadership is lost / startup fails (an error).
  Status run(std::stop_token stop);

  // The bound addresses (after run() started the servers; "" when disabled).
  std::string healthAddress() const;
  std::string metricsAddress() const;
  bool isLeader() const;
  // Until when this replica may make outside writes (the store's ledger and admin API): the
  // elector's fence (LeaderElector::leadingUntil), or always without leader election. It may be
  // called from any thread, at any time, before run() as after it.
  Clock::TimePoint leadingUntil() const;

private:
  Manager(kube::ClientPtr client, ManagerOptions options, const Clock& clock);
  HttpServerResponse serve(const HttpServerRequest& request);
  Status startServers();
  void stopServers();

  kube::ClientPtr client_;
  ManagerOptions options_;
  const Clock& clock_;
  // Shared with the observer the manager installs on the client, which may outlive it.
  std::shared_ptr<Registry> registry_;
  std::unique_ptr<EventRecorder> events_;
  int collector_id_ = 0;
  std::vector<InformerPtr> informers_;
  std::vector<std::shared_ptr<Controller>> controllers_;
  std::unique_ptr<LeaderElector> elector_;
  std::unique_ptr<HttpServer> health_server_;
  std::unique_ptr<HttpServer> metrics_server_;

  mutable std::mutex mutex_;
  std::condition_variable_any cv_;
  bool elected_ = false;
  bool lost_ = false;
  std::atomic<bool> leading_{false};
  std::atomic<bool> shutting_down_{false};
  Gauge* leader_gauge_ = nullptr;
};

// "hostname_pid", the default identity of a replica.
std::string defaultIdentity();

}  // namespace kvc::runtime
