// kvcache store leader: the container of a managed backend's leader Deployment (DESIGN.md §2,
// "who elects the store leader"). With --lease it campaigns for the Lease (client-go's election,
// runtime/leader_election.h) and runs the master command given after `--` only while it holds
// it: on winning it labels its own Pod mooncake.io/store-role=leader and starts the master; on
// losing it stops the master and exits, so the container restarts as a standby. Without --lease
// (electionBackend: None) it runs the master at once. Either way it serves /healthz for the
// liveness probe: a standby runs no master whose /health could answer, and is alive all the same.
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

#include "internal/process_flags.h"
#include "kvc/cmd/commands.h"
#include "kvc/common/log.h"
#include "kvc/kube/client.h"
#include "kvc/kube/config.h"
#include "kvc/kube/resource.h"
#include "kvc/policy/store/store_workload.h"
#include "kvc/runtime/http_server.h"
#include "kvc/runtime/leader_election.h"
#include "kvc/store/child_process.h"

namespace kvc::cmd {
namespace {

struct LeaderOptions {
  std::string lease;  // "namespace/name"; empty: no election
  std::string identity;
  std::string advertise;  // host:port published on the Lease
  std::string kubeconfig;
  std::string health_address = ":9004";
  std::string lease_duration = "15s";
  std::string renew_deadline = "10s";
  std::string retry_period = "2s";
  std::string stop_grace = "10s";
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
  const std::string ns = envOr("KUBERNETES_POD_NAMESPACE", "");
  if (pod.empty() || ns.empty()) {
    return;  // not in a Pod (a test on the host): nothing to label
  }
  const kube::Api pods(client, kube::resources::pods(), ns);
  auto patched = pods.patch(
      pod, kube::MergePatch{{{"metadata",
                              {{"labels", {{std::string(policy::kStoreRoleLabel), value}}}}}}});
  if (!patched.ok()) {
    spdlog::warn("store leader: could not label Pod {}/{} ({}={}): {}", ns, pod,
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

int runLeader(const LeaderOptions& options) {
  if (Status logging = initLogging(options.log_level); !logging.ok()) {
    std::cerr << "kvcache store leader: --log-level: " << logging.message() << "\n";
    return kExitBadInput;
  }
  if (options.command.empty()) {
    std::cerr << "kvcache store leader: no master command: give it after `--`, e.g. "
                 "`kvcache store leader -- mooncake_master -rpc_port=50051`\n";
    return kExitBadInput;
  }
  Clock::Duration lease_duration{}, renew_deadline{}, retry_period{}, grace{};
  for (auto [text, flag, into] :
       {std::tuple{&options.lease_duration, "--lease-duration", &lease_duration},
        std::tuple{&options.renew_deadline, "--renew-deadline", &renew_deadline},
        std::tuple{&options.retry_period, "--retry-period", &retry_period},
        std::tuple{&options.stop_grace, "--stop-grace", &grace}}) {
    auto d = internal::parseDuration(*text, flag);
    if (!d.ok()) {
      std::cerr << "kvcache store leader: " << d.status().message() << "\n";
      return kExitBadInput;
    }
    *into = *d;
  }
  std::string lease_ns, lease_name;
  if (!options.lease.empty()) {
    const auto slash = options.lease.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == options.lease.size()) {
      std::cerr << "kvcache store leader: --lease: \"" << options.lease
                << "\" must be NAMESPACE/NAME (the Lease <backend>-leader)\n";
      return kExitBadInput;
    }
    lease_ns = options.lease.substr(0, slash);
    lease_name = options.lease.substr(slash + 1);
    if (Status timing =
            runtime::validateLeaderElectionTiming(lease_duration, renew_deadline, retry_period);
        !timing.ok()) {
      std::cerr << "kvcache store leader: --lease-duration, --renew-deadline, --retry-period: "
                << timing.message() << "\n";
      return kExitBadInput;
    }
  }
  auto listen = runtime::parseListenAddress(options.health_address);
  if (!listen.ok()) {
    std::cerr << "kvcache store leader: --health-address: " << listen.status().message() << "\n";
    return kExitBadInput;
  }

  internal::SignalStopper signals;  // before any thread starts
  std::stop_source stop;
  signals.watch(stop);
  const auto grace_ms = std::chrono::duration_cast<std::chrono::milliseconds>(grace);
  std::atomic<bool> master_running{false};
  std::unique_ptr<runtime::LeaderElector> elector;
  std::atomic<runtime::LeaderElector*> campaigning{nullptr};  // what /healthz reads

  std::unique_ptr<runtime::HttpServer> health;
  if (listen->port >= 0) {
    auto server = runtime::HttpServer::create(*listen, [&](const runtime::HttpServerRequest&) {
      runtime::LeaderElector* candidate = campaigning.load();
      if (candidate != nullptr) {
        if (Status ok = candidate->check(std::chrono::seconds(20)); !ok.ok()) {
          return runtime::HttpServerResponse{500, "text/plain; charset=utf-8",
                                             ok.message() + "\n"};
        }
      }
      const bool leading = candidate == nullptr || candidate->isLeader();
      return runtime::HttpServerResponse{
          200, "text/plain; charset=utf-8",
          std::string(leading ? (master_running ? "ok: leader, master running\n"
                                                : "ok: leader, master starting\n")
                              : "ok: standby\n")};
    });
    if (!server.ok()) {
      std::cerr << "kvcache store leader: --health-address: " << server.status().message()
                << "\n";
      return kExitBadInput;
    }
    health = std::move(*server);
    health->start();
    spdlog::info("store leader: liveness on http://{}/healthz", health->address());
  }

  if (options.lease.empty()) {
    spdlog::info("store leader: no election (electionBackend None): running the master");
    return superviseMaster(options.command, stop.get_token(), grace_ms, master_running);
  }

  auto config = kube::loadDefaultConfig(options.kubeconfig);
  if (!config.ok()) {
    std::cerr << "kvcache store leader: --kubeconfig: " << config.status().message() << "\n";
    return kExitFailure;
  }
  auto client = kube::Client::create(*config);
  if (!client.ok()) {
    std::cerr << "kvcache store leader: " << client.status().message() << "\n";
    return kExitFailure;
  }
  const std::string identity =
      !options.identity.empty() ? options.identity
                                : envOr("KUBERNETES_POD_NAME", envOr("HOSTNAME", ""));
  if (identity.empty()) {
    std::cerr << "kvcache store leader: --identity: none given and neither KUBERNETES_POD_NAME "
                 "nor HOSTNAME is set\n";
    return kExitBadInput;
  }
  labelOwnPod(*client, nullptr);  // a restarted former leader is a standby until it wins again

  std::atomic<bool> leading{false};
  std::atomic<bool> lost{false};
  // The master runs until a signal, a lost Lease or its own exit, whichever comes first.
  std::stop_source master_stop;
  const std::stop_callback on_signal(stop.get_token(), [&] { master_stop.request_stop(); });
  runtime::LeaderElectionConfig election;
  const std::string advertised = advertisedAddress(options);
  Json holder_annotations = Json::object();
  if (!advertised.empty()) {
    holder_annotations[std::string(policy::kMasterAddressAnnotation)] = advertised;
  } else {
    spdlog::warn("store leader: no --advertise-address and no KUBERNETES_POD_IP: Lease-addressed "
                 "members cannot find this master");
  }
  election.lock = std::make_shared<runtime::KubeLeaseLock>(*client, lease_ns, lease_name,
                                                           identity, holder_annotations);
  election.lease_duration = lease_duration;
  election.renew_deadline = renew_deadline;
  election.retry_period = retry_period;
  election.name = lease_name;
  election.callbacks.on_started_leading = [&] { leading = true; };
  election.callbacks.on_stopped_leading = [&] {
    lost = true;
    master_stop.request_stop();
  };
  election.callbacks.on_new_leader = [&](const std::string& holder) {
    spdlog::info("store leader: Lease {}/{} is held by {}", lease_ns, lease_name,
                 holder.empty() ? "nobody" : holder);
  };
  auto created = runtime::LeaderElector::create(std::move(election));
  if (!created.ok()) {
    std::cerr << "kvcache store leader: " << created.status().message() << "\n";
    return kExitBadInput;
  }
  elector = std::move(*created);
  campaigning = elector.get();
  spdlog::info("store leader: {} campaigning for Lease {}/{}", identity, lease_ns, lease_name);
  std::stop_source election_stop;
  std::jthread campaign([&](std::stop_token) { elector->run(election_stop.get_token()); });

  // Standby until the Lease is won (or a signal comes).
  while (!leading && !lost && !stop.stop_requested()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  int code = kExitOk;
  if (leading && !lost && !stop.stop_requested()) {
    labelOwnPod(*client, std::string("leader"));
    code = superviseMaster(options.command, master_stop.get_token(), grace_ms, master_running);
    if (lost && !stop.stop_requested()) {
      spdlog::error("store leader: lost the Lease {}/{}: master stopped; exiting to restart "
                    "as a standby",
                    lease_ns, lease_name);
      code = kExitFailure;
    }
  }
  // Releasing the Lease lets a standby take over after one retry rather than a lease duration.
  election_stop.request_stop();
  campaign.join();
  campaigning = nullptr;
  if (leading) {
    labelOwnPod(*client, nullptr);
  }
  return code;
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
      "standby included. Exit status: the master's when it exits, 0 after SIGTERM, 1 when the\n"
      "Lease is lost or the cluster cannot be reached, 2 on bad flags.");
  leader->add_option("--lease", options->lease,
                     "The Lease to hold, NAMESPACE/NAME (omit: electionBackend None)");
  leader->add_option("--identity", options->identity,
                     "Candidate identity (default: $KUBERNETES_POD_NAME, then $HOSTNAME)");
  leader->add_option("--advertise-address", options->advertise,
                     "The master's address for Lease-addressed members, HOST:PORT, written on "
                     "the Lease (default: $KUBERNETES_POD_IP and the command's -rpc_port)");
  leader->add_option("--kubeconfig", options->kubeconfig,
                     "kubeconfig file (default: $KUBECONFIG, then the in-cluster service account)");
  leader->add_option("--health-address", options->health_address,
                     "Where /healthz listens, HOST:PORT or :PORT (\"0\" disables)")
      ->capture_default_str();
  leader->add_option("--lease-duration", options->lease_duration, "Lease duration")
      ->capture_default_str();
  leader->add_option("--renew-deadline", options->renew_deadline,
                     "How long the holder retries renewing before giving the Lease up")
      ->capture_default_str();
  leader->add_option("--retry-period", options->retry_period, "Time between tries")
      ->capture_default_str();
  leader->add_option("--stop-grace", options->stop_grace,
                     "SIGTERM to SIGKILL of the master when it is stopped")
      ->capture_default_str();
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
