// kvcache operator: the manager — leader election on the Lease, informers, the probe and
// metrics endpoints, graceful shutdown on SIGTERM/SIGINT — with the admission webhooks on every
// replica and the controllers (KVCacheBackend, KVCachePool with its Bindings) on the leader.
#include <pthread.h>
#include <signal.h>

#include <cctype>
#include <chrono>
#include <iostream>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <tuple>

#include "internal/process_flags.h"
#include "internal/webhook_runner.h"
#include "kvc/cmd/commands.h"
#include "kvc/common/log.h"
#include "kvc/controllers/register.h"
#include "kvc/kube/client.h"
#include "kvc/kube/config.h"
#include "kvc/kube/resource.h"
#include "kvc/runtime/allocator.h"
#include "kvc/runtime/controller.h"
#include "kvc/runtime/informer.h"
#include "kvc/runtime/leader_election.h"
#include "kvc/runtime/manager.h"
#include "kvc/webhook/certificate_keeper.h"

namespace kvc::cmd {
namespace {

struct OperatorOptions {
  std::string kubeconfig;
  std::string context;
  std::string namespace_name = "gpustack-system";
  std::string lease_name = "kvcache-operator";
  bool leader_elect = true;
  std::string lease_duration = "15s";
  std::string renew_deadline = "10s";
  std::string retry_period = "2s";
  std::string identity;
  std::string health_address = "127.0.0.1:8081";
  std::string metrics_address = "127.0.0.1:8080";
  std::string watch_namespace;
  std::string selector;
  int workers = 2;
  std::string log_level = "info";
  std::string log_format = "text";
  WebhookOptions webhook;
};

// The manager's settings from the flags; InvalidArgument naming the flag. Checked before any
// cluster is reached: bad flags are exit 2 whatever the kubeconfig.
Result<runtime::ManagerOptions> managerOptions(const OperatorOptions& options) {
  runtime::ManagerOptions manager_options;
  manager_options.namespace_name = options.namespace_name;
  manager_options.lease_name = options.lease_name;
  manager_options.leader_elect = options.leader_elect;
  manager_options.identity = options.identity;
  manager_options.health_address = options.health_address;
  manager_options.metrics_address = options.metrics_address;
  for (auto [text, flag, into] :
       {std::tuple{&options.lease_duration, "--lease-duration", &manager_options.lease_duration},
        std::tuple{&options.renew_deadline, "--renew-deadline", &manager_options.renew_deadline},
        std::tuple{&options.retry_period, "--retry-period", &manager_options.retry_period}}) {
    auto d = internal::parseDuration(*text, flag);
    if (!d.ok()) {
      return d.status();
    }
    *into = *d;
  }
  if (Status timing = runtime::validateLeaderElectionTiming(manager_options.lease_duration,
                                                            manager_options.renew_deadline,
                                                            manager_options.retry_period);
      !timing.ok()) {
    return Status(StatusCode::InvalidArgument,
                  "--lease-duration, --renew-deadline, --retry-period: " + timing.message());
  }
  return manager_options;
}

Result<kube::ClientPtr> clusterClient(const OperatorOptions& options) {
  kube::LoadOptions load;
  load.context = options.context;
  auto config = kube::loadDefaultConfig(options.kubeconfig, load);
  if (!config.ok()) {
    return config.status();
  }
  return kube::Client::create(*config);
}

// What the controllers watch and how many workers each runs (they run on the Lease holder).
controllers::ControllerSetup controllerSetup(const OperatorOptions& options) {
  controllers::ControllerSetup setup;
  setup.selector = options.selector;
  setup.watch_namespace = options.watch_namespace;
  setup.operator_namespace = options.namespace_name;
  setup.workers = options.workers;
  return setup;
}

// The self-managed webhook certificate (--webhook-cert-secret): issued or read from its Secret
// and written to disk before this returns, because the webhook server reads the files when it
// starts; then kept fresh in the background. nullptr when the certificate is not self-managed
// (or the webhooks are off).
Result<std::unique_ptr<webhook::CertificateKeeper>> keepCertificate(const OperatorOptions& options,
                                                                    const kube::ClientPtr& client,
                                                                    std::stop_token stop) {
  const WebhookOptions& webhook_options = options.webhook;
  if (webhook_options.cert_secret.empty() || webhook_options.port == 0) {
    return std::unique_ptr<webhook::CertificateKeeper>();
  }
  webhook::CertificateKeeperOptions keeper;
  keeper.namespace_name = options.namespace_name;
  keeper.secret_name = webhook_options.cert_secret;
  keeper.service_name = webhook_options.service;
  keeper.webhook_configurations = webhook_options.configurations;
  keeper.cert_dir = webhook_options.cert_dir;
  auto certificates = std::make_unique<webhook::CertificateKeeper>(client, std::move(keeper));
  if (Status ready = certificates->syncUntilReady(stop, std::chrono::minutes(2)); !ready.ok()) {
    return ready;
  }
  certificates->start();
  return certificates;
}

// Serves the webhooks (on every replica, leader or not) and runs the manager until a signal;
// then stops the webhooks, then the certificate keeper.
int serveUntilStopped(runtime::Manager& m, const WebhookOptions& webhook_options,
                      webhook::CertificateKeeper* certificates, std::stop_token stop) {
  auto webhooks = WebhookRunner::create(m, webhook_options);
  if (!webhooks.ok()) {
    std::cerr << "kvcache operator: " << webhooks.status().message() << "\n";
    return kExitBadInput;
  }
  if (Status started = (*webhooks)->start(); !started.ok()) {
    std::cerr << "kvcache operator: admission webhooks: " << started.message() << "\n";
    return kExitFailure;
  }

  const Status result = m.run(stop);
  (*webhooks)->stop();
  if (certificates != nullptr) {
    certificates->stop();
  }
  if (!result.ok()) {
    std::cerr << "kvcache operator: " << result.message() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

// Flags are checked first (exit 2), then the cluster is reached (exit 1); the steps that
// follow each say how they fail.
int runOperator(const OperatorOptions& options) {
  const LogFormat format = options.log_format == "json" ? LogFormat::JsonLines : LogFormat::Text;
  if (Status logging = initLogging(options.log_level, format); !logging.ok()) {
    std::cerr << "kvcache operator: --log-level: " << logging.message() << "\n";
    return kExitBadInput;
  }
  // Informer caches are long-lived: keep the allocator from holding a list's peak.
  runtime::tuneAllocatorForCaches();
  auto manager_options = managerOptions(options);
  if (!manager_options.ok()) {
    std::cerr << "kvcache operator: " << manager_options.status().message() << "\n";
    return kExitBadInput;
  }
  if (Status certs = validateCertificateOptions(options.webhook); !certs.ok()) {
    std::cerr << "kvcache operator: " << certs.message() << "\n";
    return kExitBadInput;
  }
  auto client = clusterClient(options);
  if (!client.ok()) {
    std::cerr << "kvcache operator: " << client.status().message() << "\n";
    return kExitFailure;
  }

  // Signals are blocked before the manager starts any thread.
  internal::SignalStopper signals;
  auto manager = runtime::Manager::create(*client, *manager_options);
  if (!manager.ok()) {
    std::cerr << "kvcache operator: " << manager.status().message() << "\n";
    return kExitBadInput;
  }
  runtime::Manager& m = **manager;
  if (Status added = controllers::addControllers(m, controllerSetup(options)); !added.ok()) {
    std::cerr << "kvcache operator: " << added.message() << "\n";
    return kExitBadInput;
  }

  std::stop_source stop;
  signals.watch(stop);
  auto certificates = keepCertificate(options, *client, stop.get_token());
  if (!certificates.ok()) {
    std::cerr << "kvcache operator: webhook certificate: " << certificates.status().message()
              << "\n";
    return kExitFailure;
  }
  WebhookOptions webhook_options = options.webhook;
  if (*certificates) {
    webhook_options.cert_file = (*certificates)->certFile();
    webhook_options.key_file = (*certificates)->keyFile();
  }
  return serveUntilStopped(m, webhook_options, certificates->get(), stop.get_token());
}

}  // namespace

void addOperatorCommand(CLI::App& app) {
  auto options = std::make_shared<OperatorOptions>();
  CLI::App* cmd = app.add_subcommand(
      "operator",
      "Run the operator: the Pod admission webhooks (HTTPS, on every replica), leader election "
      "on a Lease, informers, controllers, /healthz, /readyz and /metrics. Stops gracefully on "
      "SIGTERM or SIGINT (releasing the Lease).");
  cmd->add_option("--kubeconfig", options->kubeconfig,
                  "kubeconfig file (default: $KUBECONFIG, then the in-cluster service "
                  "account, then ~/.kube/config)");
  cmd->add_option("--context", options->context, "kubeconfig context (default: current)");
  cmd->add_option("--namespace", options->namespace_name, "namespace of the operator and its Lease")
      ->capture_default_str();
  cmd->add_option("--lease-name", options->lease_name, "name of the leader-election Lease")
      ->capture_default_str();
  cmd->add_flag("--leader-elect,!--no-leader-elect", options->leader_elect,
                "run controllers only on the replica holding the Lease (default true; "
                "--leader-elect=false runs them unconditionally)");
  cmd->add_option("--lease-duration", options->lease_duration,
                  "how long a standby waits, after it last saw the Lease change, before "
                  "taking it over")
      ->capture_default_str();
  cmd->add_option("--renew-deadline", options->renew_deadline,
                  "how long the leader keeps retrying a renewal before it gives up leading")
      ->capture_default_str();
  cmd->add_option("--retry-period", options->retry_period,
                  "interval between attempts to acquire or renew the Lease")
      ->capture_default_str();
  cmd->add_option("--identity", options->identity,
                  "this replica's identity in the Lease (default: hostname_pid)");
  cmd->add_option("--health-addr", options->health_address,
                  "address of /healthz and /readyz (\"0\" disables; use :8081 in a Pod)")
      ->capture_default_str();
  cmd->add_option("--metrics-addr", options->metrics_address,
                  "address of /metrics (\"0\" disables; may equal --health-addr)")
      ->capture_default_str();
  cmd->add_option("--watch-namespace", options->watch_namespace,
                  "only reconcile the KVCachePoolBindings (and watch the labelled Pods) of this "
                  "namespace (default: all)");
  cmd->add_option("--selector", options->selector,
                  "only reconcile KVCacheBackends, KVCachePools and KVCachePoolBindings whose "
                  "labels match this selector, e.g. team=a (default: all); the webhooks still "
                  "see every object");
  cmd->add_option("--workers", options->workers, "reconcile workers per controller")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  addWebhookOptions(*cmd, options->webhook);
  cmd->add_option("--log-level", options->log_level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  cmd->add_option("--log-format", options->log_format, "text or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] {
    const int code = runOperator(*options);
    if (code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

}  // namespace kvc::cmd
