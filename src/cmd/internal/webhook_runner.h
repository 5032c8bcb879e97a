#pragma once
// The admission webhooks inside `kvcache operator`: on every replica (no Lease needed), an HTTPS
// server with the Pod mutate and freeze handlers and the validation of our kinds, resolving
// against the manager's informer caches (Bindings, pools, backends, the gpustack-settings
// ConfigMap, and namespaces for a ModelDeployment's Pod Security level) with live reads on a
// miss, reporting decisions as metrics and Events.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "kvc/common/status.h"
#include "kvc/runtime/events.h"
#include "kvc/runtime/informer.h"
#include "kvc/runtime/manager.h"
#include "kvc/runtime/settings_cache.h"
#include "kvc/webhook/injection_events.h"
#include "kvc/webhook/live_cluster_view.h"
#include "kvc/webhook/server.h"

namespace CLI {
class App;
}

namespace kvc::cmd {

struct WebhookOptions {
  std::string address = "0.0.0.0";
  int port = 9443;  // 0 disables the webhooks
  std::string cert_file;
  std::string key_file;
  int threads = 2;
  // Self-managed certificate (webhook::CertificateKeeper): all four set, or none.
  std::string cert_secret;
  std::string service;
  std::vector<std::string> configurations;
  std::string cert_dir;
};

void addWebhookOptions(CLI::App& command, WebhookOptions& options);
// The flag combinations: the self-managed certificate's four flags go together and exclude
// --tls-cert-file.
Status validateCertificateOptions(const WebhookOptions& options);

class WebhookRunner {
public:
  // Registers the informers the webhooks read with `manager` (call before manager.run()).
  static Result<std::unique_ptr<WebhookRunner>> create(runtime::Manager& manager,
                                                       WebhookOptions options);
  ~WebhookRunner();

  // Starts serving; readiness waits for the caches and the certificate.
  Status start();
  void stop();
  unsigned short port() const;

private:
  WebhookRunner() = default;

  WebhookOptions options_;
  runtime::Manager* manager_ = nullptr;
  runtime::InformerPtr bindings_;
  runtime::InformerPtr pools_;
  runtime::InformerPtr backends_;
  runtime::InformerPtr settings_;
  runtime::InformerPtr namespaces_;
  std::shared_ptr<webhook::LiveClusterView> view_;
  std::shared_ptr<webhook::LiveNamespaceLabels> namespace_labels_;
  std::shared_ptr<runtime::SettingsCache> settings_cache_;
  std::shared_ptr<webhook::InjectionEvents> events_;
  std::unique_ptr<runtime::HttpServer> server_;
  std::atomic<bool> serving_{false};  // server_ is set and stays set
};

}  // namespace kvc::cmd
