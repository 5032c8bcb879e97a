// kvcache store member: the container of a managed backend's member DaemonSet (DESIGN.md §2).
// Runs the member process given after `--` (mc_store_rest_server), which reads its
// configuration from the environment the DaemonSet renders. MOONCAKE_MASTER is either a
// Service address, handed through as it is (the Service follows the ready leader; with
// --follow-lease the member is also restarted once the Service answers after the Lease's holder
// changed, rather than re-mounting only when its RPCs to the dead master time out), or
// `k8s://<namespace>/<lease>` (memberAddressing: Lease), which this command resolves: it reads the
// Lease's holder and the master address the holder published on it
// (kvcache.gpustack.ai/master-address), starts the member against that address, and restarts it
// against the new one whenever the holder changes — the member re-mounts its segment on the new
// master.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "internal/process_flags.h"
#include "internal/tcp_probe.h"
#include "kvc/cmd/commands.h"
#include "kvc/common/log.h"
#include "kvc/kube/client.h"
#include "kvc/kube/config.h"
#include "kvc/kube/resource.h"
#include "kvc/policy/store/store_workload.h"
#include "kvc/store/child_process.h"

namespace kvc::cmd {
namespace {

constexpr std::string_view kLeaseScheme = "k8s://";
// How long a member whose master moved is given to exit before it is killed.
constexpr std::chrono::milliseconds kMasterMovedGrace{200};
constexpr int kFirstReadTries = 20;  // then give up: the kubelet's back-off takes over

struct MemberOptions {
  std::string kubeconfig;
  std::string follow_lease;  // NAMESPACE/NAME, with Service addressing
  std::string poll = "200ms";
  std::string stop_grace = "10s";
  std::string log_level = "info";
  std::vector<std::string> command;
};

// The master a Lease names: its holder and the address the holder published; nullopt while
// nobody holds it (between a release and the next acquisition) or the holder published none.
struct LeaseMaster {
  std::string holder;
  std::string address;
  friend bool operator==(const LeaseMaster&, const LeaseMaster&) = default;
};

Result<std::optional<LeaseMaster>> readLeaseMaster(const kube::Api& leases,
                                                   const std::string& name) {
  auto lease = leases.get(name);
  if (!lease.ok()) {
    if (lease.error().isNotFound()) {
      return std::optional<LeaseMaster>();
    }
    return Status(StatusCode::Unavailable,
                  "reading Lease " + name + ": " + lease.error().describe());
  }
  const std::string holder =
      lease->value(Json::json_pointer("/spec/holderIdentity"), std::string());
  const Json annotations =
      lease->value(Json::json_pointer("/metadata/annotations"), Json::object());
  const std::string address =
      annotations.value(std::string(policy::kMasterAddressAnnotation), std::string());
  if (holder.empty() || address.empty()) {
    return std::optional<LeaseMaster>();
  }
  return std::optional<LeaseMaster>(LeaseMaster{holder, address});
}

int runDirect(const MemberOptions& options, std::stop_token stop, std::chrono::milliseconds grace) {
  auto child = store::ChildProcess::start(options.command);
  if (!child.ok()) {
    std::cerr << "kvcache store member: " << child.status().message() << "\n";
    return kExitFailure;
  }
  const std::optional<int> exited = child->runUntil(stop, grace);
  if (!exited) {
    return kExitOk;
  }
  return *exited == 0 ? kExitFailure : *exited;  // a member never exits on its own
}

// The Lease a member follows: its own address (Lease addressing: MOONCAKE_MASTER=k8s://NS/LEASE)
// or, with --follow-lease, only the moment the master moves (Service addressing: the member keeps
// the Service address and is restarted once the Service answers again).
struct FollowedLease {
  std::string namespace_name;
  std::string name;
  bool resolve = false;  // Lease addressing: start the member against the holder's address
  std::string service;   // Service addressing: the HOST:PORT to wait for after a move
};

// "NS/NAME" -> (NS, NAME); nullopt when malformed.
std::optional<std::pair<std::string, std::string>> splitLease(const std::string& target) {
  const auto slash = target.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == target.size()) {
    return std::nullopt;
  }
  return std::pair{target.substr(0, slash), target.substr(slash + 1)};
}

// True once HOST:PORT accepts a TCP connection (each try bounded by 300 ms), trying every 100 ms
// for at most `budget`; false when it never did or `stop` came first.
bool awaitTcp(const std::string& address, std::chrono::milliseconds budget, std::stop_token stop) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    return false;
  }
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);  // [IPv6]:PORT
  }
  const std::string port = address.substr(colon + 1);
  const auto until = std::chrono::steady_clock::now() + budget;
  while (!stop.stop_requested() && std::chrono::steady_clock::now() < until) {
    if (internal::tcpConnects(host, port, std::chrono::milliseconds(300))) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// How long a Service-addressed member waits for the Service after the master moved, before it
// starts anyway (and retries on its own, as it would have without following).
constexpr std::chrono::seconds kServiceWait{30};

// Follows the Lease until `stop`: (re)starts the member whenever its holder changes.
int followLease(const MemberOptions& options, const kube::Api& leases, const FollowedLease& lease,
                std::stop_token stop, std::chrono::milliseconds poll,
                std::chrono::milliseconds grace) {
  std::optional<store::ChildProcess> child;
  std::optional<LeaseMaster> current;
  int failed_reads = 0;
  bool ever_read = false;
  if (!lease.resolve) {
    // Service addressing needs no Lease to start: the Lease only says when to restart.
    auto started = store::ChildProcess::start(options.command);
    if (!started.ok()) {
      std::cerr << "kvcache store member: " << started.status().message() << "\n";
      return kExitFailure;
    }
    child = std::move(*started);
  }
  while (!stop.stop_requested()) {
    auto read = readLeaseMaster(leases, lease.name);
    if (!read.ok()) {
      ++failed_reads;
      if (lease.resolve && !ever_read && failed_reads >= kFirstReadTries) {
        std::cerr << "kvcache store member: gave up after " << failed_reads
                  << " tries: " << read.status().message() << "\n";
        return kExitFailure;
      }
      if (failed_reads == 1 || failed_reads % 100 == 0) {  // not every poll of an outage
        spdlog::warn("store member: {} ({} tries in a row)", read.status().message(), failed_reads);
      }
    } else {
      ever_read = true;
      failed_reads = 0;
      const bool moved = *read && current && **read != *current;
      if (*read && (moved || (!current && lease.resolve))) {
        // A new master: the member re-mounts its segment there. The old process is not given
        // its grace: the master it mounted on no longer leads, so there is nothing to unmount
        // from, and a graceful stop would only wait for RPCs to a dead master to time out.
        if (child) {
          spdlog::info("store member: the master moved to {} ({}); restarting the member",
                       (*read)->address, (*read)->holder);
          child->stop(kMasterMovedGrace);
          child.reset();
        }
        std::vector<std::string> env;
        if (lease.resolve) {
          env.push_back("MOONCAKE_MASTER=" + (*read)->address);
        } else if (!awaitTcp(lease.service, kServiceWait, stop)) {
          spdlog::warn("store member: {} did not answer within {} s; starting the member anyway",
                       lease.service, kServiceWait.count());
        }
        auto started = store::ChildProcess::start(options.command, env);
        if (!started.ok()) {
          std::cerr << "kvcache store member: " << started.status().message() << "\n";
          return kExitFailure;
        }
        spdlog::info("store member: started {} against {} (Lease {}/{} held by {})",
                     options.command.front(), lease.resolve ? (*read)->address : lease.service,
                     lease.namespace_name, lease.name, (*read)->holder);
        child = std::move(*started);
      }
      if (*read) {
        current = *read;
      }
    }
    if (child) {
      if (auto code = child->poll()) {
        // Only where the member's own last words are not the container's termination message's
        // tail: with Service addressing the kubelet's 2 KB of log must end with the member's
        // error ("no write permission on directory", the seed's Troubleshooting row).
        if (lease.resolve) {
          spdlog::error("store member: {} exited with code {}", options.command.front(), *code);
        }
        return *code == 0 ? kExitFailure : *code;
      }
    }
    std::this_thread::sleep_for(poll);
  }
  if (child) {
    child->stop(grace);
  }
  return kExitOk;
}

int runMember(const MemberOptions& options) {
  if (Status logging = initLogging(options.log_level); !logging.ok()) {
    std::cerr << "kvcache store member: --log-level: " << logging.message() << "\n";
    return kExitBadInput;
  }
  if (options.command.empty()) {
    std::cerr << "kvcache store member: no member command: give it after `--`, e.g. "
                 "`kvcache store member -- mc_store_rest_server`\n";
    return kExitBadInput;
  }
  auto poll = internal::parseDuration(options.poll, "--lease-poll");
  auto grace = internal::parseDuration(options.stop_grace, "--stop-grace");
  for (const auto* parsed : {&poll, &grace}) {
    if (!parsed->ok()) {
      std::cerr << "kvcache store member: " << parsed->status().message() << "\n";
      return kExitBadInput;
    }
  }
  const auto poll_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*poll);
  const auto grace_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*grace);

  const char* master_env = std::getenv("MOONCAKE_MASTER");
  const std::string master = master_env != nullptr ? master_env : "";
  FollowedLease lease;
  std::optional<std::pair<std::string, std::string>> target;
  if (master.rfind(kLeaseScheme, 0) == 0) {
    target = splitLease(master.substr(kLeaseScheme.size()));
    if (!target) {
      std::cerr << "kvcache store member: MOONCAKE_MASTER: \"" << master
                << "\" must be k8s://NAMESPACE/LEASE or HOST:PORT\n";
      return kExitBadInput;
    }
    lease.resolve = true;
  } else if (!options.follow_lease.empty()) {
    target = splitLease(options.follow_lease);
    if (!target) {
      std::cerr << "kvcache store member: --follow-lease: \"" << options.follow_lease
                << "\" must be NAMESPACE/NAME (the Lease <backend>-leader)\n";
      return kExitBadInput;
    }
    lease.service = master;
  }
  internal::SignalStopper signals;
  std::stop_source stop;
  signals.watch(stop);
  if (!target) {
    spdlog::info("store member: master {} (Service addressing): running the member", master);
    return runDirect(options, stop.get_token(), grace_ms);
  }
  lease.namespace_name = target->first;
  lease.name = target->second;
  auto config = kube::loadDefaultConfig(options.kubeconfig);
  auto client = config.ok()
                    ? kube::Client::create(*config)
                    : Result<kube::ClientPtr>(Status(config.status().code(),
                                                     "--kubeconfig: " + config.status().message()));
  if (!client.ok()) {
    if (!lease.resolve) {
      // Following is an optimisation of Service addressing, never a reason not to run.
      spdlog::warn("store member: not following Lease {}/{} ({}): running the member",
                   lease.namespace_name, lease.name, client.status().message());
      return runDirect(options, stop.get_token(), grace_ms);
    }
    std::cerr << "kvcache store member: " << client.status().message() << "\n";
    return kExitFailure;
  }
  const kube::Api leases = kube::Api(*client, kube::resources::leases(), lease.namespace_name)
                               .withTimeout(std::chrono::seconds(5));
  return followLease(options, leases, lease, stop.get_token(), poll_ms, grace_ms);
}

}  // namespace

void addStoreMemberCommand(CLI::App& app) {
  CLI::App* store = storeSubcommand(app);
  auto options = std::make_shared<MemberOptions>();
  CLI::App* member = store->add_subcommand(
      "member", "Run a backend's member process and follow its master (the member container)");
  member->footer(
      "usage: kvcache store member [flags] -- mc_store_rest_server [ARG...]\n"
      "MOONCAKE_MASTER=HOST:PORT (Service addressing) is handed to the member as it is.\n"
      "MOONCAKE_MASTER=k8s://NAMESPACE/LEASE (Lease addressing) is resolved to the address the\n"
      "Lease's holder published (kvcache.gpustack.ai/master-address), polled every\n"
      "--lease-poll; the member is restarted against the new master whenever the holder changes.\n"
      "With Service addressing, --follow-lease NAMESPACE/NAME restarts the member whenever that\n"
      "Lease's holder changes, once HOST:PORT accepts connections again (at most 30 s).\n"
      "The Lease unreadable 20 times in a row before the first read: exit 1. Exit status: the\n"
      "member's when it exits, 0 after SIGTERM, 2 on bad flags.");
  member->add_option("--kubeconfig", options->kubeconfig,
                     "kubeconfig file (default: $KUBECONFIG, then the in-cluster service account)");
  member->add_option("--follow-lease", options->follow_lease,
                     "With Service addressing: the leader's Lease, NAMESPACE/NAME, whose holder "
                     "changing restarts the member");
  member->add_option("--lease-poll", options->poll, "How often the Lease is read")
      ->capture_default_str();
  member
      ->add_option("--stop-grace", options->stop_grace,
                   "SIGTERM to SIGKILL of the member when it is restarted or stopped")
      ->capture_default_str();
  member->add_option("--log-level", options->log_level, "trace|debug|info|warn|error")
      ->capture_default_str();
  member->add_option("command", options->command, "The member command line, after --");
  member->callback([options] {
    const int code = runMember(*options);
    if (code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

}  // namespace kvc::cmd
