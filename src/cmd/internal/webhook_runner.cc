#include "internal/webhook_runner.h"

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "kvc/api/indexes.h"
#include "kvc/api/settings.h"
#include "kvc/kube/resource.h"
#include "kvc/webhook/pod_handlers.h"
#include "kvc/webhook/routes.h"

namespace kvc::cmd {
namespace {

// A live read (an object the caches have not seen yet) must not hold a Pod create past the
// webhook's own 5 s timeout.
constexpr std::chrono::milliseconds kLiveReadTimeout{2000};

}  // namespace

void addWebhookOptions(CLI::App& command, WebhookOptions& options) {
  command
      .add_option("--webhook-address", options.address,
                  "Address the admission webhooks' HTTPS server listens on")
      ->capture_default_str();
  command
      .add_option("--webhook-port", options.port,
                  "Port of the admission webhooks' HTTPS server (0 disables the webhooks)")
      ->capture_default_str();
  command.add_option("--tls-cert-file", options.cert_file,
                     "Serving certificate of the webhooks (PEM), re-read when it changes; "
                     "without it the webhooks are not served");
  command.add_option("--tls-key-file", options.key_file,
                     "Private key of the serving certificate (PEM), re-read when it changes");
  command.add_option("--webhook-threads", options.threads, "Threads of the webhook server")
      ->capture_default_str();
  command.add_option("--webhook-cert-secret", options.cert_secret,
                     "Self-managed certificate: the Secret (in --namespace) that holds a CA and "
                     "the serving certificate it signed, created and renewed by the operator; "
                     "needs --webhook-service, --webhook-configurations and --cert-dir, and "
                     "excludes --tls-cert-file");
  command.add_option("--webhook-service", options.service,
                     "Self-managed certificate: the Service the API server calls the webhooks "
                     "through (the certificate names <service>.<namespace>.svc)");
  command
      .add_option("--webhook-configurations", options.configurations,
                  "Self-managed certificate: the Mutating/ValidatingWebhookConfigurations "
                  "whose caBundle the operator keeps (comma-separated)")
      ->delimiter(',');
  command.add_option("--cert-dir", options.cert_dir,
                     "Self-managed certificate: the directory the serving certificate is written "
                     "to (tls.crt, tls.key, ca.crt) and re-read from");
}

Status validateCertificateOptions(const WebhookOptions& options) {
  const bool managed = !options.cert_secret.empty();
  if (managed && !options.cert_file.empty()) {
    return invalidArgument(
        "--webhook-cert-secret and --tls-cert-file exclude each other: the "
        "operator either keeps its own certificate or reads yours");
  }
  if (!managed &&
      (!options.service.empty() || !options.configurations.empty() || !options.cert_dir.empty())) {
    return invalidArgument(
        "--webhook-service, --webhook-configurations and --cert-dir belong "
        "to --webhook-cert-secret, which is not set");
  }
  if (managed && (options.service.empty() || options.cert_dir.empty())) {
    return invalidArgument("--webhook-cert-secret needs --webhook-service and --cert-dir");
  }
  return okStatus();
}

Result<std::unique_ptr<WebhookRunner>> WebhookRunner::create(runtime::Manager& manager,
                                                             WebhookOptions options) {
  if (options.cert_file.empty() != options.key_file.empty()) {
    return invalidArgument("--tls-cert-file and --tls-key-file go together");
  }
  if (options.cert_file.empty()) {
    options.port = 0;  // no serving certificate: the API server could not call us anyway
  }
  std::unique_ptr<WebhookRunner> runner(new WebhookRunner());
  runner->options_ = std::move(options);
  runner->manager_ = &manager;
  if (runner->options_.port == 0) {
    return runner;
  }
  runtime::InformerOptions bindings;
  bindings.resource = kube::resources::kvCachePoolBindings();
  KVC_ASSIGN_OR_RETURN(runner->bindings_, manager.informerFor(bindings));
  runner->bindings_->addIndex(api::kBindingsByPool, &api::bindingPool);
  runner->bindings_->addIndex(api::kBindingsByDomain, &api::bindingDomain);
  runtime::InformerOptions pools;
  pools.resource = kube::resources::kvCachePools();
  KVC_ASSIGN_OR_RETURN(runner->pools_, manager.informerFor(pools));
  runner->pools_->addIndex(api::kPoolsByBackend, &api::poolBackends);
  runtime::InformerOptions backends;
  backends.resource = kube::resources::kvCacheBackends();
  KVC_ASSIGN_OR_RETURN(runner->backends_, manager.informerFor(backends));
  KVC_ASSIGN_OR_RETURN(runner->settings_, manager.informerFor(runtime::settingsInformerOptions()));
  // Namespaces, for their labels only (a ModelDeployment's Pod Security level).
  runtime::InformerOptions namespaces;
  namespaces.resource = kube::resources::namespaces();
  namespaces.transform = runtime::keepFields({});
  KVC_ASSIGN_OR_RETURN(runner->namespaces_, manager.informerFor(namespaces));

  runner->view_ = std::make_shared<webhook::LiveClusterView>(
      manager.client(), &runner->bindings_->cache(), &runner->pools_->cache(),
      &runner->backends_->cache(), kLiveReadTimeout);
  runner->namespace_labels_ = std::make_shared<webhook::LiveNamespaceLabels>(
      manager.client(), &runner->namespaces_->cache(), kLiveReadTimeout);
  runner->settings_cache_ = std::make_shared<runtime::SettingsCache>(runner->settings_->cache());
  runner->events_ = std::make_shared<webhook::InjectionEvents>(manager.client(), manager.events());
  return runner;
}

WebhookRunner::~WebhookRunner() { stop(); }

Status WebhookRunner::start() {
  if (options_.port == 0) {
    spdlog::info(
        "admission webhooks disabled (no --tls-cert-file/--tls-key-file, or "
        "--webhook-port 0)");
    return okStatus();
  }
  auto observers = std::make_shared<webhook::ObserverList>();
  observers->add(std::make_shared<webhook::InjectionMetrics>(manager_->metrics()));
  observers->add(events_);
  webhook::WebhookRoutes routes;
  auto settings_cache = settings_cache_;
  routes.mutator = std::make_shared<webhook::PodMutator>(
      view_, [settings_cache] { return settings_cache->current(); }, observers);
  routes.quota = std::make_shared<webhook::QuotaAdmission>(
      manager_->client(),
      webhook::QuotaCaches{&pools_->cache(), &backends_->cache(), &bindings_->cache()},
      [settings_cache] { return settings_cache->current(); }, kLiveReadTimeout);
  routes.backend = std::make_shared<webhook::BackendValidation>(
      [settings_cache] { return settings_cache->current(); });
  routes.model_deployment = std::make_shared<webhook::ModelDeploymentValidation>(
      view_, [settings_cache] { return settings_cache->current(); },
      [labels = namespace_labels_](std::string_view namespace_name) {
        return labels->labels(namespace_name);
      });
  routes.metrics = &manager_->metrics();
  routes.ready = [this] {
    // A server exists only with its certificate loaded (it refuses to start without one).
    return serving_ && bindings_->hasSynced() && pools_->hasSynced() && backends_->hasSynced() &&
           settings_->hasSynced() && namespaces_->hasSynced();
  };
  runtime::HttpServerOptions server = webhook::defaultServerOptions();
  server.listen = {options_.address, options_.port};
  server.cert_file = options_.cert_file;
  server.key_file = options_.key_file;
  server.threads = options_.threads;
  auto started = webhook::startServer(std::move(server), routes);
  if (!started.ok()) {
    return started.status();
  }
  server_ = std::move(started).value();
  serving_ = true;
  spdlog::info("admission webhooks serving on https://{}:{}", options_.address, server_->port());
  return okStatus();
}

void WebhookRunner::stop() {
  if (server_) {
    server_->stop();
  }
  if (events_) {
    events_->stop();
  }
}

unsigned short WebhookRunner::port() const { return server_ ? server_->port() : 0; }

}  // namespace kvc::cmd
