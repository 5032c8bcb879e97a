// kvcache store leader: the container of a managed backend's leader Deployment (DESIGN.md §2,
// "who elects the store leader"). With --lease it campaigns for the Lease (client-go's election,
// runtime/leader_election.h) and runs the master command given after `--` only while it holds
// it: on winning it labels its own Pod mooncake.io/store-role=leader and starts the master; on
// losing it stops the master and exits, so the container restarts as a standby. Fenced: the master
// is stopped once the renew deadline has passed since the last renewal was sent, which the timing
// check at start puts, with the stop grace, before any standby can take the Lease
// (docs/backends.md, "Failover and fencing"). Without --lease (electionBackend: None) it runs the
// master at once. Either way it serves /healthz for the liveness probe: a standby runs no master
// whose /health could answer, and is alive all the same. With --admin-address it serves the
// master's admin API over mutual TLS (internal/admin_proxy.h) in front of the master's loopback
// listener (--admin-upstream), and /readyz answers 200 only while that master serves (the leader's
// readiness).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "internal/admin_proxy.h"
#include "internal/policy_refresh.h"
#include "internal/process_flags.h"
#include "kvc/cmd/commands.h"
#include "kvc/common/log.h"
#include "kvc/kube/client.h"
#include "kvc/kube/config.h"
#include "kvc/kube/resource.h"
#include "kvc/policy/store/leader_timing.h"
#include "kvc/policy/store/store_workload.h"
#include "kvc/runtime/http_server.h"
#include "kvc/runtime/leader_election.h"
#include "kvc/store/admin_client.h"
#include "kvc/store/child_process.h"
#include "kvc/store/http.h"

namespace kvc::cmd {
namespace {

constexpr policy::LeaderTiming kDefaultTiming = policy::leaderTiming(api::kDefaultLeaderLease);

struct LeaderOptions {
  std::string lease;  // "namespace/name"; empty: no election
  std::string identity;
  std::string advertise;  // host:port published on the Lease
  std::string kubeconfig;
  std::string health_address = ":9004";
  std::string admin_address;  // empty: no admin proxy
  std::string admin_tls_dir = "/etc/kvcache/admin-tls";
  std::string admin_upstream = "127.0.0.1:9013";
  // What the operator renders by default (policy/store/leader_timing.h).
  std::string lease_duration = policy::durationValue(kDefaultTiming.lease_duration);
  std::string renew_deadline = policy::durationValue(kDefaultTiming.renew_deadline);
  std::string retry_period = policy::durationValue(kDefaultTiming.retry_period);
  std::string stop_grace = policy::durationValue(kDefaultTiming.stop_grace);
  std::string policy_config_map;  // "namespace/name"; empty: the init container's copy only
  std::string log_level = "info";
  std::vector<std::string> command;
};

std::string envOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : std::move(fallback);
}

// Sets (value) or clears (null) the store-role label on this Pod; best effort, logged.
void labelOwnPod(const kube::ClientPtr& client, const Json& value) {
  const std::string pod = envOr("KUBERNETES_POD_NAME", "");
  const std::string namespace_name = envOr("KUBERNETES_POD_NAMESPACE", "");
  if (pod.empty() || namespace_name.empty()) {
    return;  // not in a Pod (a test on the host): nothing to label
  }
  const kube::Api pods(client, kube::resources::pods(), namespace_name);
  auto patched = pods.patch(
      pod, kube::MergePatch{
               {{"metadata", {{"labels", {{std::string(policy::kStoreRoleLabel), value}}}}}}});
  if (!patched.ok()) {
    spdlog::warn("store leader: could not label Pod {}/{} ({}={}): {}", namespace_name, pod,
                 policy::kStoreRoleLabel, value.dump(), patched.error().describe());
  }
}

// Runs the master until it exits or `stop` is requested; returns its exit code, or 0 when
// stopped.
int superviseMaster(const std::vector<std::string>& command, std::stop_token stop,
                    std::chrono::milliseconds grace, std::atomic<bool>& running) {
  auto child = store::ChildProcess::start(command);
  if (!child.ok()) {
    spdlog::error("store leader: {}", child.status().message());
    return kExitFailure;
  }
  spdlog::info("store leader: started {} (pid {})", command.front(), child->pid());
  running = true;
  const std::optional<int> exited = child->runUntil(stop, grace);
  running = false;
  if (exited) {
    spdlog::error("store leader: {} exited with code {}", command.front(), *exited);
    return *exited == 0 ? kExitFailure : *exited;  // a master never exits on its own
  }
  spdlog::info("store leader: stopped {}", command.front());
  return kExitOk;
}

// host:port of the master for Lease-addressed members: --advertise-address, else
// $KUBERNETES_POD_IP and the command's -rpc_port (50051 when absent); "" when no IP is known.
std::string advertisedAddress(const LeaderOptions& options) {
  if (!options.advertise.empty()) {
    return options.advertise;
  }
  const std::string ip = envOr("KUBERNETES_POD_IP", "");
  if (ip.empty()) {
    return {};
  }
  std::string port = std::to_string(policy::kMasterRpcPort);
  for (const std::string& arg : options.command) {
    for (std::string_view prefix : {"-rpc_port=", "--rpc_port="}) {
      if (arg.rfind(prefix, 0) == 0) {
        port = arg.substr(prefix.size());
      }
    }
  }
  return (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" + port;
}

// What the flags come to, checked before anything starts.
struct LeaderSettings {
  Clock::Duration lease_duration{};
  Clock::Duration renew_deadline{};
  Clock::Duration retry_period{};
  std::chrono::milliseconds grace{};  // --stop-grace
  std::string lease_ns;               // empty without --lease
  std::string lease_name;
  std::string policy_ns;  // --policy-configmap; empty without it
  std::string policy_name;
  std::string policy_file;        // the master's -tenant_quota_connector_uri
  runtime::ListenAddress listen;  // --health-address
  runtime::ListenAddress admin;   // --admin-address; port -1: none
};

// The flags, checked in the order they are documented; InvalidArgument naming the flag. A bad
// flag exits 2 with nothing started (no thread, no listener, no master).
Result<LeaderSettings> leaderSettings(const LeaderOptions& options) {
  auto bad = [](std::string message) {
    return Status(StatusCode::InvalidArgument, std::move(message));
  };
  if (options.command.empty()) {
    return bad(
        "no master command: give it after `--`, e.g. "
        "`kvcache store leader -- mooncake_master -rpc_port=50051`");
  }
  LeaderSettings settings;
  Clock::Duration grace{};
  for (auto [text, flag, into] :
       {std::tuple{&options.lease_duration, "--lease-duration", &settings.lease_duration},
        std::tuple{&options.renew_deadline, "--renew-deadline", &settings.renew_deadline},
        std::tuple{&options.retry_period, "--retry-period", &settings.retry_period},
        std::tuple{&options.stop_grace, "--stop-grace", &grace}}) {
    auto d = internal::parseDuration(*text, flag);
    if (!d.ok()) {
      return bad(d.status().message());
    }
    *into = *d;
  }
  settings.grace = std::chrono::duration_cast<std::chrono::milliseconds>(grace);
  if (!options.lease.empty()) {
    const auto slash = options.lease.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == options.lease.size()) {
      return bad("--lease: \"" + options.lease +
                 "\" must be NAMESPACE/NAME (the Lease <backend>-leader)");
    }
    settings.lease_ns = options.lease.substr(0, slash);
    settings.lease_name = options.lease.substr(slash + 1);
    if (Status timing = runtime::validateLeaderElectionTiming(
            settings.lease_duration, settings.renew_deadline, settings.retry_period);
        !timing.ok()) {
      return bad("--lease-duration, --renew-deadline, --retry-period: " + timing.message());
    }
    // The master must be gone before a standby can take the Lease (fenceMaster below).
    if (Status fenced =
            runtime::validateFencing(settings.lease_duration, settings.renew_deadline, grace);
        !fenced.ok()) {
      return bad("--lease-duration, --renew-deadline, --stop-grace: " + fenced.message());
    }
  }
  if (!options.policy_config_map.empty()) {
    const auto slash = options.policy_config_map.find('/');
    if (options.lease.empty() || slash == std::string::npos || slash == 0 ||
        slash + 1 == options.policy_config_map.size()) {
      return bad("--policy-configmap: \"" + options.policy_config_map +
                 "\" must be NAMESPACE/NAME (the ConfigMap <backend>-tenant-quota-policy), "
                 "given with --lease");
    }
    std::optional<std::string> file = internal::masterPolicyFile(options.command);
    if (!file) {
      return bad(
          "--policy-configmap: the master's command line names no policy file: give it "
          "-tenant_quota_connector_uri=PATH");
    }
    settings.policy_ns = options.policy_config_map.substr(0, slash);
    settings.policy_name = options.policy_config_map.substr(slash + 1);
    settings.policy_file = *file;
  }
  auto listen = runtime::parseListenAddress(options.health_address);
  if (!listen.ok()) {
    return bad("--health-address: " + listen.status().message());
  }
  settings.listen = *listen;
  auto admin = runtime::parseListenAddress(options.admin_address);
  if (!admin.ok()) {
    return bad("--admin-address: " + admin.status().message());
  }
  settings.admin = *admin;
  if (settings.admin.port >= 0 && !store::validateAdminAddress(options.admin_upstream).ok()) {
    return bad("--admin-upstream: \"" + options.admin_upstream + "\" must be HOST:PORT");
  }
  return settings;
}

// What /healthz reads, and the elector it asks. It outlives the health server (declared before
// it), so a probe answered while the election ends never reads a destroyed elector.
struct LeaderHealth {
  std::atomic<bool> master_running{false};
  std::unique_ptr<runtime::LeaderElector> elector;
  std::atomic<runtime::LeaderElector*> campaigning{nullptr};  // set while campaigning
  std::shared_ptr<store::HttpTransport> upstream = store::newCurlTransport();  // for /readyz
};

// The liveness answer. 200 for a standby too: the probe must not restart a launcher only because
// another Pod holds the Lease; 500 when the elector believes it leads but has not renewed for
// the lease duration plus 20 s (a wedged renew loop; LeaderElector::check).
runtime::HttpServerResponse liveness(LeaderHealth& state) {
  runtime::LeaderElector* candidate = state.campaigning.load();
  if (candidate != nullptr) {
    if (Status ok = candidate->check(std::chrono::seconds(20)); !ok.ok()) {
      return {500, "text/plain; charset=utf-8", ok.message() + "\n"};
    }
  }
  const bool leading = candidate == nullptr || candidate->isLeader();
  return {200, "text/plain; charset=utf-8",
          std::string(leading ? (state.master_running ? "ok: leader, master running\n"
                                                      : "ok: leader, master starting\n")
                              : "ok: standby\n")};
}

// The readiness answer: 200 only while the master behind the admin proxy serves its data plane
// (GET /get_all_segments, 503 until it is the active leader) and the Lease is not past its fence,
// so standbys stay out of the leader Service. Without the proxy: while the master runs.
runtime::HttpServerResponse readiness(LeaderHealth& state, const std::string& upstream) {
  // Never past the fence, even in the moment before fenceMaster stops the master (a launcher
  // resumed from a pause answers its first probe with its Lease long gone).
  runtime::LeaderElector* elector = state.campaigning.load();
  const bool fenced = elector != nullptr && realClock().now() >= elector->leadingUntil();
  const bool ready =
      !fenced && (upstream.empty()
                      ? state.master_running.load()
                      : state.master_running && internal::masterServes(*state.upstream, upstream));
  return {ready ? 200 : 503, "text/plain; charset=utf-8",
          ready ? "ok: the master serves\n" : "not ready: no serving master here\n"};
}

// Starts /healthz and /readyz (nullptr with --health-address 0); any other path answers as
// /healthz did before there was a /readyz.
Result<std::unique_ptr<runtime::HttpServer>> startHealth(const runtime::ListenAddress& listen,
                                                         LeaderHealth& state,
                                                         const std::string& upstream) {
  if (listen.port < 0) {
    return std::unique_ptr<runtime::HttpServer>();
  }
  auto server = runtime::HttpServer::create(
      listen, [&state, upstream](const runtime::HttpServerRequest& request) {
        return request.path == "/readyz" ? readiness(state, upstream) : liveness(state);
      });
  if (!server.ok()) {
    return server.status();
  }
  (*server)->start();
  spdlog::info("store leader: liveness on http://{}/healthz, readiness on /readyz",
               (*server)->address());
  return std::move(*server);
}

// The cluster client the election uses; the message says which step failed.
Result<kube::ClientPtr> clusterClient(const LeaderOptions& options) {
  auto config = kube::loadDefaultConfig(options.kubeconfig);
  if (!config.ok()) {
    return Status(config.status().code(), "--kubeconfig: " + config.status().message());
  }
  return kube::Client::create(*config);
}

// What the election's callbacks tell the main thread.
struct Campaign {
  std::atomic<bool> leading{false};
  std::atomic<bool> lost{false};
  // The master runs until a signal, a lost Lease or its own exit, whichever comes first.
  std::stop_source master_stop;
};

// The election: the Lease carries this master's address for Lease-addressed members; winning
// lets the main thread start the master, losing stops it.
runtime::LeaderElectionConfig electionConfig(const LeaderOptions& options,
                                             const LeaderSettings& settings,
                                             const kube::ClientPtr& client,
                                             const std::string& identity, Campaign& campaign) {
  runtime::LeaderElectionConfig election;
  const std::string advertised = advertisedAddress(options);
  Json holder_annotations = Json::object();
  if (!advertised.empty()) {
    holder_annotations[std::string(policy::kMasterAddressAnnotation)] = advertised;
  } else {
    spdlog::warn(
        "store leader: no --advertise-address and no KUBERNETES_POD_IP: Lease-addressed "
        "members cannot find this master");
  }
  election.lock = std::make_shared<runtime::KubeLeaseLock>(
      client, settings.lease_ns, settings.lease_name, identity, holder_annotations);
  election.lease_duration = settings.lease_duration;
  election.renew_deadline = settings.renew_deadline;
  election.retry_period = settings.retry_period;
  election.name = settings.lease_name;
  election.callbacks.on_started_leading = [&campaign] { campaign.leading = true; };
  election.callbacks.on_stopped_leading = [&campaign] {
    campaign.lost = true;
    campaign.master_stop.request_stop();
  };
  election.callbacks.on_new_leader = [lease_ns = settings.lease_ns,
                                      lease_name = settings.lease_name](const std::string& holder) {
    spdlog::info("store leader: Lease {}/{} is held by {}", lease_ns, lease_name,
                 holder.empty() ? "nobody" : holder);
  };
  return election;
}

// The fence, enforced whatever the elector's thread is doing (blocked in a call, or just resumed
// from a pause): once the elector's leadingUntil() has passed, the master is stopped — SIGTERM,
// SIGKILL a stop grace later — so it is gone before any standby can take the Lease
// (runtime::validateFencing, checked at start). Polls every 50 ms while the master runs.
std::jthread fenceMaster(const runtime::LeaderElector& elector, Campaign& campaign,
                         const LeaderSettings& settings) {
  return std::jthread([&elector, &campaign, &settings](std::stop_token stop) {
    while (!stop.stop_requested() && !campaign.master_stop.stop_requested()) {
      if (realClock().now() >= elector.leadingUntil()) {
        spdlog::error(
            "store leader: no renewal of Lease {}/{} for the renew deadline: stopping the master "
            "before a standby can take the Lease",
            settings.lease_ns, settings.lease_name);
        campaign.lost = true;
        campaign.master_stop.request_stop();
        return;
      }
      realClock().sleepFor(stop, std::chrono::milliseconds(50));
    }
  });
}

// With --policy-configmap: the master about to start reads the ledger as the operator last wrote
// it, not the copy its Pod started with (internal/policy_refresh.h). Bounded (1 s), since the
// store serves nothing meanwhile; on failure the seeded copy stays and the operator converges.
void refreshPolicy(const kube::ClientPtr& client, const LeaderSettings& settings) {
  if (settings.policy_name.empty()) {
    return;
  }
  const kube::Api config_maps = kube::Api(client, kube::resources::configMaps(), settings.policy_ns)
                                    .withTimeout(std::chrono::seconds(1));
  const Status refreshed =
      internal::refreshPolicyFile(config_maps, settings.policy_name, settings.policy_file);
  if (refreshed.ok()) {
    spdlog::info("store leader: policy {} refreshed from ConfigMap {}/{}", settings.policy_file,
                 settings.policy_ns, settings.policy_name);
  } else {
    spdlog::warn(
        "store leader: policy {} not refreshed ({}): the master starts with the copy this Pod "
        "started with",
        settings.policy_file, refreshed.message());
  }
}

// Standby until the Lease is won (or a signal comes); then the master, labelled leader, until a
// signal, a lost Lease or its own exit. A lost Lease exits 1 so that the container restarts as a
// standby; a signal exits 0.
int leadOnceElected(const LeaderOptions& options, const LeaderSettings& settings,
                    const std::stop_source& stop, const kube::ClientPtr& client, Campaign& campaign,
                    LeaderHealth& state) {
  while (!campaign.leading && !campaign.lost && !stop.stop_requested()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  int code = kExitOk;
  if (campaign.leading && !campaign.lost && !stop.stop_requested()) {
    const std::jthread fence = fenceMaster(*state.elector, campaign, settings);
    refreshPolicy(client, settings);
    labelOwnPod(client, std::string("leader"));
    code = superviseMaster(options.command, campaign.master_stop.get_token(), settings.grace,
                           state.master_running);
    if (campaign.lost && !stop.stop_requested()) {
      spdlog::error(
          "store leader: lost the Lease {}/{}: master stopped; exiting to restart "
          "as a standby",
          settings.lease_ns, settings.lease_name);
      code = kExitFailure;
    }
  }
  return code;
}

// With --lease: connect, campaign, and run the master only while holding the Lease. The
// elector goes into `state` (which outlives the health server); the campaign thread is joined
// before this returns.
int campaignAndLead(const LeaderOptions& options, const LeaderSettings& settings,
                    const std::stop_source& stop, LeaderHealth& state) {
  auto client = clusterClient(options);
  if (!client.ok()) {
    std::cerr << "kvcache store leader: " << client.status().message() << "\n";
    return kExitFailure;
  }
  const std::string identity = !options.identity.empty()
                                   ? options.identity
                                   : envOr("KUBERNETES_POD_NAME", envOr("HOSTNAME", ""));
  if (identity.empty()) {
    std::cerr << "kvcache store leader: --identity: none given and neither KUBERNETES_POD_NAME "
                 "nor HOSTNAME is set\n";
    return kExitBadInput;
  }
  labelOwnPod(*client, nullptr);  // a restarted former leader is a standby until it wins again

  Campaign campaign;
  const std::stop_callback on_signal(stop.get_token(),
                                     [&campaign] { campaign.master_stop.request_stop(); });
  auto created = runtime::LeaderElector::create(
      electionConfig(options, settings, *client, identity, campaign));
  if (!created.ok()) {
    std::cerr << "kvcache store leader: " << created.status().message() << "\n";
    return kExitBadInput;
  }
  state.elector = std::move(*created);
  state.campaigning = state.elector.get();
  spdlog::info("store leader: {} campaigning for Lease {}/{}", identity, settings.lease_ns,
               settings.lease_name);
  std::stop_source election_stop;
  std::jthread thread([&](std::stop_token) { state.elector->run(election_stop.get_token()); });

  const int code = leadOnceElected(options, settings, stop, *client, campaign, state);
  // Releasing the Lease lets a standby take over after one retry rather than a lease duration.
  election_stop.request_stop();
  thread.join();
  state.campaigning = nullptr;
  if (campaign.leading) {
    labelOwnPod(*client, nullptr);
  }
  return code;
}

int runLeader(const LeaderOptions& options) {
  if (Status logging = initLogging(options.log_level); !logging.ok()) {
    std::cerr << "kvcache store leader: --log-level: " << logging.message() << "\n";
    return kExitBadInput;
  }
  auto settings = leaderSettings(options);
  if (!settings.ok()) {
    std::cerr << "kvcache store leader: " << settings.status().message() << "\n";
    return kExitBadInput;
  }

  internal::SignalStopper signals;  // before any thread starts
  std::stop_source stop;
  signals.watch(stop);
  LeaderHealth state;  // before the health server, which reads it
  const bool proxied = settings->admin.port >= 0;
  auto health = startHealth(settings->listen, state, proxied ? options.admin_upstream : "");
  if (!health.ok()) {
    std::cerr << "kvcache store leader: --health-address: " << health.status().message() << "\n";
    return kExitBadInput;
  }
  std::unique_ptr<runtime::HttpServer> admin;  // before the master starts: nothing unguarded
  if (proxied) {
    auto proxy = internal::startAdminProxy(
        {settings->admin, options.admin_tls_dir, options.admin_upstream}, state.upstream);
    if (!proxy.ok()) {
      std::cerr << "kvcache store leader: --admin-address: " << proxy.status().message() << "\n";
      return kExitBadInput;
    }
    admin = std::move(*proxy);
  }

  if (options.lease.empty()) {
    spdlog::info("store leader: no election (electionBackend None): running the master");
    return superviseMaster(options.command, stop.get_token(), settings->grace,
                           state.master_running);
  }
  return campaignAndLead(options, *settings, stop, state);
}

}  // namespace

void addStoreLeaderCommand(CLI::App& app) {
  CLI::App* store = storeSubcommand(app);
  auto options = std::make_shared<LeaderOptions>();
  CLI::App* leader = store->add_subcommand(
      "leader", "Run a backend's master while holding its Lease (the leader container)");
  leader->footer(
      "usage: kvcache store leader [--lease NS/NAME] [flags] -- mooncake_master FLAG...\n"
      "With --lease, campaigns for the Lease and runs the master only while holding it; on\n"
      "winning, labels its Pod mooncake.io/store-role=leader (KUBERNETES_POD_NAME and\n"
      "KUBERNETES_POD_NAMESPACE name it); on losing, stops the master and exits 1. Without\n"
      "--lease, runs the master at once. /healthz answers 200 while the launcher is well,\n"
      "standby included; /readyz while its master serves. With --admin-address, serves the\n"
      "master's admin API there over mutual TLS (--admin-tls-dir: tls.crt, tls.key, ca.crt;\n"
      "a client certificate of group kvcache:operator may use every route, kvcache:metrics\n"
      "GET /metrics only), forwarded to the master's loopback listener (--admin-upstream;\n"
      "give the master -metrics_host=127.0.0.1 and that port). Exit status: the master's when it "
      "exits, 0 after SIGTERM, 1 when the\n"
      "Lease is lost or the cluster cannot be reached, 2 on bad flags.\n"
      "Fencing: the master is stopped (SIGTERM, SIGKILL --stop-grace later) once\n"
      "--renew-deadline has passed since the last renewal was sent; --renew-deadline +\n"
      "--stop-grace + 250ms must fit in --lease-duration, so that the master is gone before a\n"
      "standby can take the Lease.");
  leader->add_option("--lease", options->lease,
                     "The Lease to hold, NAMESPACE/NAME (omit: electionBackend None)");
  leader->add_option("--identity", options->identity,
                     "Candidate identity (default: $KUBERNETES_POD_NAME, then $HOSTNAME)");
  leader->add_option("--advertise-address", options->advertise,
                     "The master's address for Lease-addressed members, HOST:PORT, written on "
                     "the Lease (default: $KUBERNETES_POD_IP and the command's -rpc_port)");
  leader->add_option("--kubeconfig", options->kubeconfig,
                     "kubeconfig file (default: $KUBECONFIG, then the in-cluster service account)");
  leader
      ->add_option("--health-address", options->health_address,
                   "Where /healthz listens, HOST:PORT or :PORT (\"0\" disables)")
      ->capture_default_str();
  leader
      ->add_option("--admin-address", options->admin_address,
                   "Where the admin API is served over mutual TLS, HOST:PORT or :PORT (empty: "
                   "not served; the master's own listener is then the admin API)")
      ->capture_default_str();
  leader
      ->add_option("--admin-tls-dir", options->admin_tls_dir,
                   "Directory of tls.crt and tls.key (the admin port's certificate) and ca.crt "
                   "(the CA client certificates must chain to); re-read when they change")
      ->capture_default_str();
  leader
      ->add_option("--admin-upstream", options->admin_upstream,
                   "The master's admin listener the proxy forwards to, HOST:PORT")
      ->capture_default_str();
  leader
      ->add_option("--lease-duration", options->lease_duration,
                   "Lease duration, whole seconds: a standby takes an unrenewed Lease this long "
                   "after its last renewal")
      ->capture_default_str();
  leader
      ->add_option("--renew-deadline", options->renew_deadline,
                   "How long after its last renewal was sent the holder gives the Lease up and "
                   "stops its master")
      ->capture_default_str();
  leader->add_option("--retry-period", options->retry_period, "Time between tries")
      ->capture_default_str();
  leader
      ->add_option("--stop-grace", options->stop_grace,
                   "SIGTERM to SIGKILL of the master when it is stopped")
      ->capture_default_str();
  leader->add_option("--policy-configmap", options->policy_config_map,
                     "With --lease: on winning it, rewrite the master's policy file "
                     "(-tenant_quota_connector_uri) from this ConfigMap's "
                     "tenant-quota-policy.yaml, NAMESPACE/NAME, before the master starts");
  leader->add_option("--log-level", options->log_level, "trace|debug|info|warn|error")
      ->capture_default_str();
  leader->add_option("command", options->command, "The master command line, after --");
  leader->callback([options] {
    const int code = runLeader(*options);
    if (code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

}  // namespace kvc::cmd
