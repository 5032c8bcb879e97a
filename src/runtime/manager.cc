#include "kvc/runtime/manager.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>

namespace kvc::runtime {

std::string defaultIdentity() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) {
    host[0] = '\0';
  }
  std::string name = host[0] != '\0' ? std::string(host.data()) : std::string("kvcache");
  return name + "_" + std::to_string(getpid());
}

Result<std::unique_ptr<Manager>> Manager::create(kube::ClientPtr client, ManagerOptions options,
                                                 const Clock& clock) {
  if (options.identity.empty()) {
    options.identity = defaultIdentity();
  }
  std::unique_ptr<Manager> manager(new Manager(std::move(client), std::move(options), clock));
  if (manager->options_.leader_elect) {
    LeaderElectionConfig config;
    config.lock =
        std::make_shared<KubeLeaseLock>(manager->client_, manager->options_.namespace_name,
                                        manager->options_.lease_name, manager->options_.identity);
    config.lease_duration = manager->options_.lease_duration;
    config.renew_deadline = manager->options_.renew_deadline;
    config.retry_period = manager->options_.retry_period;
    config.name = manager->options_.lease_name;
    config.release_on_cancel = true;
    Manager* self = manager.get();
    config.callbacks.on_started_leading = [self] {
      std::lock_guard<std::mutex> guard(self->mutex_);
      self->elected_ = true;
      self->cv_.notify_all();
    };
    config.callbacks.on_stopped_leading = [self] {
      self->leading_ = false;
      if (self->leader_gauge_ != nullptr) {
        self->leader_gauge_->set(0);
      }
      std::lock_guard<std::mutex> guard(self->mutex_);
      if (!self->shutting_down_) {
        self->lost_ = true;
      }
      self->cv_.notify_all();
    };
    auto elector = LeaderElector::create(std::move(config), clock);
    if (!elector.ok()) {
      return elector.status();
    }
    manager->elector_ = std::move(elector).value();
  }
  return manager;
}

Manager::Manager(kube::ClientPtr client, ManagerOptions options, const Clock& clock)
    : client_(std::move(client)),
      options_(std::move(options)),
      clock_(clock),
      registry_(std::make_shared<Registry>()) {
  EventRecorderOptions recorder;
  recorder.reporting_instance = options_.identity;
  events_ = std::make_unique<EventRecorder>(client_, std::move(recorder), clock_);
  leader_gauge_ = &registry_
                       ->gauge("leader_election_master_status",
                               "1 when this replica holds the Lease, 0 otherwise", {"name"})
                       .with({options_.lease_name});
  auto* requests =
      &registry_->counter("rest_client_requests_total", "Number of HTTP requests to the API server",
                          {"code", "method", "resource"});
  auto* latency =
      &registry_->histogram("rest_client_request_duration_seconds",
                            "Latency of API server requests (watches excluded)", {"method"});
  // The client outlives the manager: the observer keeps the registry it writes into alive.
  client_->setObserver([registry = registry_, requests, latency](const kube::RequestRecord& r) {
    const std::string code = r.code == 0 ? "<error>" : std::to_string(r.code);
    requests->with({code, std::string(r.method), std::string(r.resource)}).inc();
    if (r.method != "WATCH") {
      latency->with({std::string(r.method)})
          .observe(std::chrono::duration<double>(r.latency).count());
    }
  });
  collector_id_ = registry_->addCollector([this](MetricWriter& w) {
    w.family("kvcache_informer_objects", "Objects held by an informer cache", "gauge");
    for (const InformerPtr& informer : informers_) {
      w.sample("kvcache_informer_objects", {{"resource", informer->resource().qualifiedName()}},
               static_cast<double>(informer->cache().size()));
    }
    w.family("kvcache_informer_relists_total", "Relists after 410 Gone", "counter");
    for (const InformerPtr& informer : informers_) {
      w.sample("kvcache_informer_relists_total",
               {{"resource", informer->resource().qualifiedName()}},
               static_cast<double>(informer->stats().relists_on_gone));
    }
    w.family("kvcache_informer_handler_failures_total", "Event handlers that threw", "counter");
    for (const InformerPtr& informer : informers_) {
      w.sample("kvcache_informer_handler_failures_total",
               {{"resource", informer->resource().qualifiedName()}},
               static_cast<double>(informer->stats().handler_failures));
    }
    const EventRecorder::Stats events = events_->stats();
    w.family("kvcache_events_total", "Events by what became of them", "counter");
    for (auto [outcome, value] :
         {std::pair{"created", events.created}, std::pair{"series_patched", events.series_patches},
          std::pair{"aggregated", events.aggregated},
          std::pair{"dropped_rate_limited", events.dropped_rate_limited},
          std::pair{"dropped_queue_full", events.dropped_queue_full},
          std::pair{"failed", events.failed}}) {
      w.sample("kvcache_events_total", {{"outcome", outcome}}, static_cast<double>(value));
    }
  });
}

Manager::~Manager() {
  // The collector above reads informers_ and events_; the registry itself lives on in the
  // client's observer until that is removed here.
  client_->setObserver(nullptr);
  registry_->removeCollector(collector_id_);
  stopServers();
  events_->stop();
}

void Manager::addInformer(InformerPtr informer) { informers_.push_back(std::move(informer)); }

void Manager::addController(std::shared_ptr<Controller> controller) {
  controllers_.push_back(std::move(controller));
}

Result<InformerPtr> Manager::informerFor(const InformerOptions& options) {
  for (const InformerPtr& informer : informers_) {
    const InformerOptions& o = informer->options();
    if (o.resource == options.resource && o.namespace_name == options.namespace_name &&
        o.label_selector == options.label_selector && o.field_selector == options.field_selector) {
      if (o.transform.id != options.transform.id || o.resync_period != options.resync_period) {
        return invalidArgument(
            "the informer on " + options.resource.qualifiedName() +
            (options.namespace_name.empty() ? "" : " in " + options.namespace_name) +
            " is registered already with transform \"" + o.transform.id + "\" and resync " +
            std::to_string(
                std::chrono::duration_cast<std::chrono::seconds>(o.resync_period).count()) +
            " s; a second registration asks for \"" + options.transform.id + "\" and " +
            std::to_string(
                std::chrono::duration_cast<std::chrono::seconds>(options.resync_period).count()) +
            " s. Register one informer with what both need");
      }
      return informer;
    }
  }
  auto informer = std::make_shared<Informer>(client_, options, clock_);
  informers_.push_back(informer);
  return informer;
}

bool Manager::isLeader() const { return leading_.load(); }

Clock::TimePoint Manager::leadingUntil() const {
  return elector_ ? elector_->leadingUntil() : Clock::TimePoint::max();
}

HttpServerResponse Manager::serve(const HttpServerRequest& request) {
  if (request.method != "GET" && request.method != "HEAD") {
    return {405, "text/plain; charset=utf-8", "method not allowed\n"};
  }
  if (request.path == "/healthz" || request.path == "/livez") {
    if (elector_) {
      const Status healthy = elector_->check(std::chrono::seconds(20));
      if (!healthy.ok()) {
        return {500, "text/plain; charset=utf-8",
                "[-]leaderElection: " + healthy.message() + "\nhealthz check failed\n"};
      }
    }
    return {200, "text/plain; charset=utf-8", "ok\n"};
  }
  if (request.path == "/readyz") {
    if (shutting_down_) {
      return {503, "text/plain; charset=utf-8", "[-]shutdown: shutting down\n"};
    }
    std::string failing;
    for (const InformerPtr& informer : informers_) {
      if (!informer->hasSynced()) {
        failing += "[-]informer " + informer->resource().qualifiedName() + ": not synced\n";
      }
    }
    if (!failing.empty()) {
      return {503, "text/plain; charset=utf-8", failing + "readyz check failed\n"};
    }
    return {200, "text/plain; charset=utf-8", "ok\n"};
  }
  if (request.path == "/metrics") {
    return {200, "text/plain; version=0.0.4; charset=utf-8", registry_->render()};
  }
  return {404, "text/plain; charset=utf-8", "not found\n"};
}

Status Manager::startServers() {
  KVC_ASSIGN_OR_RETURN(ListenAddress health, parseListenAddress(options_.health_address));
  KVC_ASSIGN_OR_RETURN(ListenAddress metrics, parseListenAddress(options_.metrics_address));
  auto handler = [this](const HttpServerRequest& r) { return serve(r); };
  if (health.port >= 0) {
    KVC_ASSIGN_OR_RETURN(health_server_, HttpServer::create(health, handler));
    health_server_->start();
    spdlog::info("manager: health probes on http://{}/healthz and /readyz",
                 health_server_->address());
  }
  const bool same = health.port > 0 && metrics.port == health.port && metrics.host == health.host;
  if (metrics.port >= 0 && !same) {
    KVC_ASSIGN_OR_RETURN(metrics_server_, HttpServer::create(metrics, handler));
    metrics_server_->start();
    spdlog::info("manager: metrics on http://{}/metrics", metrics_server_->address());
  }
  return okStatus();
}

void Manager::stopServers() {
  if (health_server_) {
    health_server_->stop();
  }
  if (metrics_server_) {
    metrics_server_->stop();
  }
}

std::string Manager::healthAddress() const {
  return health_server_ ? health_server_->address() : std::string();
}

std::string Manager::metricsAddress() const {
  if (metrics_server_) {
    return metrics_server_->address();
  }
  return healthAddress();
}

Status Manager::run(std::stop_token stop) {
  KVC_RETURN_IF_ERROR(startServers());
  events_->start();
  for (const InformerPtr& informer : informers_) {
    informer->start();
  }
  std::stop_source elector_stop;
  std::jthread elector_thread;
  if (elector_) {
    spdlog::info("manager: identity {}; campaigning for lease {}/{}", options_.identity,
                 options_.namespace_name, options_.lease_name);
    elector_thread =
        std::jthread([this, token = elector_stop.get_token()] { elector_->run(token); });
  } else {
    std::lock_guard<std::mutex> guard(mutex_);
    elected_ = true;
  }

  Status result = okStatus();
  bool controllers_started = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop.stop_requested()) {
      cv_.wait(lock, stop, [this, &controllers_started] {
        return lost_ || (elected_ && !controllers_started);
      });
      if (stop.stop_requested()) {
        break;
      }
      if (lost_) {
        result = unavailable("leadership of lease " + options_.namespace_name + "/" +
                             options_.lease_name + " was lost");
        break;
      }
      if (elected_ && !controllers_started) {
        lock.unlock();
        leading_ = true;
        leader_gauge_->set(1);
        const auto deadline = std::chrono::steady_clock::now() + options_.sync_timeout;
        bool synced = true;
        for (const InformerPtr& informer : informers_) {
          const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
              deadline - std::chrono::steady_clock::now());
          if (!informer->waitForSync(std::max(left, std::chrono::milliseconds(0)), stop)) {
            synced = false;
            if (!stop.stop_requested()) {
              result = deadlineExceeded("informer " + informer->resource().qualifiedName() +
                                        " did not sync within " +
                                        std::to_string(options_.sync_timeout.count()) + " ms");
            }
            break;
          }
        }
        lock.lock();
        if (!synced) {
          break;
        }
        for (const auto& controller : controllers_) {
          controller->start();
        }
        controllers_started = true;
        spdlog::info("manager: {} controller(s) started", controllers_.size());
      }
    }
  }

  // Shutdown: controllers first (running reconciles finish), then release the Lease.
  spdlog::info("manager: shutting down");
  shutting_down_ = true;
  for (const auto& controller : controllers_) {
    controller->stop();
  }
  elector_stop.request_stop();
  if (elector_thread.joinable()) {
    elector_thread.join();
  }
  leading_ = false;
  leader_gauge_->set(0);
  events_->stop();
  for (const InformerPtr& informer : informers_) {
    informer->stop();
  }
  stopServers();
  spdlog::info("manager: stopped{}", result.ok() ? "" : " (" + result.toString() + ")");
  return result;
}

}  // namespace kvc::runtime
