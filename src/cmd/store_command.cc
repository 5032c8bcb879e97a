// kvcache store status: capacity, members and the tenant ledger of a Mooncake master, read from
// its admin port (the same reads the operator makes). A managed master's admin port takes mutual
// TLS only: the client certificate comes from files (--tls-dir) or from the operator's own Secret
// in the cluster (--tls-secret).
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "kvc/cmd/commands.h"
#include "kvc/common/base64.h"
#include "kvc/kube/client.h"
#include "kvc/kube/config.h"
#include "kvc/kube/resource.h"
#include "kvc/store/admin_client.h"
#include "kvc/store/overview.h"

namespace kvc::cmd {
namespace {

struct StoreStatusOptions {
  std::string admin;
  double timeout_seconds = 5.0;
  std::string output = "table";
  std::string tls_dir;
  std::string tls_secret;  // NAMESPACE/NAME
  std::string connect_to;
  std::string kubeconfig;
};

Result<std::string> readFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return invalidArgument("cannot read " + path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// tls.crt, tls.key and ca.crt from a directory or from a Secret; nullptr when neither is given.
Result<std::shared_ptr<const store::TlsCredentials>> credentials(
    const StoreStatusOptions& options) {
  if (!options.tls_dir.empty()) {
    store::TlsCredentials out;
    KVC_ASSIGN_OR_RETURN(out.cert_pem, readFile(options.tls_dir + "/tls.crt"));
    KVC_ASSIGN_OR_RETURN(out.key_pem, readFile(options.tls_dir + "/tls.key"));
    KVC_ASSIGN_OR_RETURN(out.ca_pem, readFile(options.tls_dir + "/ca.crt"));
    return std::make_shared<const store::TlsCredentials>(std::move(out));
  }
  if (options.tls_secret.empty()) {
    return std::shared_ptr<const store::TlsCredentials>();
  }
  const auto slash = options.tls_secret.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == options.tls_secret.size()) {
    return invalidArgument("--tls-secret: \"" + options.tls_secret + "\" must be NAMESPACE/NAME");
  }
  KVC_ASSIGN_OR_RETURN(kube::Config config, kube::loadDefaultConfig(options.kubeconfig));
  KVC_ASSIGN_OR_RETURN(kube::ClientPtr client, kube::Client::create(config));
  const kube::Api secrets(client, kube::resources::secrets(), options.tls_secret.substr(0, slash));
  auto secret = secrets.get(options.tls_secret.substr(slash + 1));
  if (!secret.ok()) {
    return Status(secret.error().status().code(),
                  "--tls-secret " + options.tls_secret + ": " + secret.error().message());
  }
  store::TlsCredentials out;
  for (auto [key, into] : {std::pair{"tls.crt", &out.cert_pem}, std::pair{"tls.key", &out.key_pem},
                           std::pair{"ca.crt", &out.ca_pem}}) {
    auto value = base64Decode(secret->value(Json::json_pointer(std::string("/data/") + key), ""));
    if (!value.ok() || value->empty()) {
      return invalidArgument("--tls-secret " + options.tls_secret + " has no " + key);
    }
    *into = *value;
  }
  return std::make_shared<const store::TlsCredentials>(std::move(out));
}

int runStoreStatus(const StoreStatusOptions& options) {
  store::AdminClientOptions client_options;
  client_options.timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_seconds * 1000.0 + 0.5));
  auto tls = credentials(options);
  if (!tls.ok()) {
    std::cerr << "kvcache store status: " << tls.status().message() << "\n";
    return kExitBadInput;
  }
  client_options.tls = *tls;
  client_options.connect_to = options.connect_to;
  auto client = store::HttpAdminClient::create(options.admin, client_options);
  if (!client.ok()) {
    std::cerr << "kvcache store status: --admin: " << client.status().message() << "\n";
    return kExitBadInput;
  }
  const store::StoreOverview overview = store::readOverview(**client);
  if (options.output == "json") {
    std::cout << store::overviewToJson(overview).dump(2) << "\n";
  } else {
    std::cout << store::renderOverviewTable(overview);
  }
  if (!store::overviewHealthy(overview)) {
    if (options.output == "json") {
      std::cerr << "kvcache store status: the master at " << options.admin
                << " is not serving or part of its state could not be read\n";
    }
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

CLI::App* storeSubcommand(CLI::App& app) {
  // Each `store` subcommand registers itself on the one `store` group, whichever comes first.
  for (CLI::App* existing : app.get_subcommands([](CLI::App*) { return true; })) {
    if (existing->get_name() == "store") {
      return existing;
    }
  }
  CLI::App* store =
      app.add_subcommand("store", "Run or inspect the Mooncake store of a KVCacheBackend");
  store->require_subcommand(1);
  return store;
}

void addStoreCommand(CLI::App& app) {
  CLI::App* store = storeSubcommand(app);
  auto options = std::make_shared<StoreStatusOptions>();
  CLI::App* status =
      store->add_subcommand("status", "Print a master's capacity, members and tenant ledger");
  status->footer(
      "Reads /health, /metrics, /get_segments_detail and /api/v1/tenant_quotas on the master's\n"
      "admin port (9003 by default). A managed backend's admin port takes mutual TLS only:\n"
      "  kvcache store status --admin <backend>-leader.gpustack-system.svc:9003 \\\n"
      "    --tls-secret gpustack-system/kvcache-store-operator-client\n"
      "from inside the cluster; from outside, after `kubectl -n gpustack-system port-forward\n"
      "svc/<backend>-leader 9003`, add --connect-to 127.0.0.1:9003 (the certificate names the\n"
      "Service, so --admin keeps the Service's name).\n"
      "Exit status: 0 when the master is serving and every part was read (a master without\n"
      "multi-tenancy counts as read), 1 when not, 2 on bad flags.");
  status->add_option("--admin", options->admin, "The master's admin address, HOST:PORT")
      ->required();
  status
      ->add_option("--timeout", options->timeout_seconds,
                   "Deadline of each HTTP request, in seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 3600.0));
  status->add_option(
      "--tls-dir", options->tls_dir,
      "mutual TLS: a directory of tls.crt, tls.key (a client certificate) and ca.crt");
  status->add_option("--tls-secret", options->tls_secret,
                     "mutual TLS: the same keys from a Secret, NAMESPACE/NAME (read with "
                     "--kubeconfig), e.g. gpustack-system/kvcache-store-operator-client");
  status->add_option("--connect-to", options->connect_to,
                     "Connect to HOST:PORT instead, still verifying --admin's name (a "
                     "port-forward, or the Service's ClusterIP)");
  status->add_option("--kubeconfig", options->kubeconfig,
                     "kubeconfig for --tls-secret (default: $KUBECONFIG, then in-cluster)");
  status->add_option("-o,--output", options->output, "Output format")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
  status->callback([options] {
    const int code = runStoreStatus(*options);
    if (code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

}  // namespace kvc::cmd
