// kvcache store member: the container of a managed backend's member DaemonSet (DESIGN.md §2).
// Runs the member process given after `--` (mc_store_rest_server), which reads its
// configuration from the environment the DaemonSet renders. MOONCAKE_MASTER is either a
// Service address, handed through as it is (the member re-mounts on its own after a failover:
// the Service follows the ready leader), or `k8s://<namespace>/<lease>` (memberAddressing:
// Lease), which this command resolves: it reads the Lease's holder and the master address the
// holder published on it (kvcache.gpustack.ai/master-address), starts the member against that
// address, and restarts it against the new one whenever the holder changes — the member
// re-mounts its segment on the new master.
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
  internal::SignalStopper signals;
  std::stop_source stop;
  signals.watch(stop);

  const char* master_env = std::getenv("MOONCAKE_MASTER");
  const std::string master = master_env != nullptr ? master_env : "";
  if (master.rfind(kLeaseScheme, 0) != 0) {
    spdlog::info("store member: master {} (Service addressing): running the member", master);
    return runDirect(options, stop.get_token(), grace_ms);
  }
  const std::string target = master.substr(kLeaseScheme.size());
  const auto slash = target.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == target.size()) {
    std::cerr << "kvcache store member: MOONCAKE_MASTER: \"" << master
              << "\" must be k8s://NAMESPACE/LEASE or HOST:PORT\n";
    return kExitBadInput;
  }
  auto config = kube::loadDefaultConfig(options.kubeconfig);
  if (!config.ok()) {
    std::cerr << "kvcache store member: --kubeconfig: " << config.status().message() << "\n";
    return kExitFailure;
  }
  auto client = kube::Client::create(*config);
  if (!client.ok()) {
    std::cerr << "kvcache store member: " << client.status().message() << "\n";
    return kExitFailure;
  }
  const std::string namespace_name = target.substr(0, slash);
  const std::string lease = target.substr(slash + 1);
  const kube::Api leases = kube::Api(*client, kube::resources::leases(), namespace_name)
                               .withTimeout(std::chrono::seconds(5));

  std::optional<store::ChildProcess> child;
  std::optional<LeaseMaster> current;
  int failed_reads = 0;
  bool ever_read = false;
  while (!stop.stop_requested()) {
    auto read = readLeaseMaster(leases, lease);
    if (!read.ok()) {
      ++failed_reads;
      if (!ever_read && failed_reads >= kFirstReadTries) {
        std::cerr << "kvcache store member: gave up after " << failed_reads
                  << " tries: " << read.status().message() << "\n";
        return kExitFailure;
      }
      spdlog::warn("store member: {}", read.status().message());
    } else {
      ever_read = true;
      failed_reads = 0;
      if (*read && *read != current) {
        // A new master: the member re-mounts its segment there. The old process is not given
        // its grace: the master it mounted on no longer leads, so there is nothing to unmount
        // from, and a graceful stop would only wait for RPCs to a dead master to time out.
        if (child) {
          spdlog::info("store member: the master moved to {} ({}); restarting the member",
                       (*read)->address, (*read)->holder);
          child->stop(kMasterMovedGrace);
          child.reset();
        }
        auto started =
            store::ChildProcess::start(options.command, {"MOONCAKE_MASTER=" + (*read)->address});
        if (!started.ok()) {
          std::cerr << "kvcache store member: " << started.status().message() << "\n";
          return kExitFailure;
        }
        spdlog::info("store member: started {} against {} (Lease {}/{} held by {})",
                     options.command.front(), (*read)->address, namespace_name, lease,
                     (*read)->holder);
        child = std::move(*started);
        current = *read;
      }
    }
    if (child) {
      if (auto code = child->poll()) {
        spdlog::error("store member: {} exited with code {}", options.command.front(), *code);
        return *code == 0 ? kExitFailure : *code;
      }
    }
    std::this_thread::sleep_for(poll_ms);
  }
  if (child) {
    child->stop(grace_ms);
  }
  return kExitOk;
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
      "The Lease unreadable 20 times in a row before the first read: exit 1. Exit status: the\n"
      "member's when it exits, 0 after SIGTERM, 2 on bad flags.");
  member->add_option("--kubeconfig", options->kubeconfig,
                     "kubeconfig file (default: $KUBECONFIG, then the in-cluster service account)");
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
