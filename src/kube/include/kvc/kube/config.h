#pragma once
// Where the API server is and how to authenticate to it, from a kubeconfig or from the
// service-account files of a Pod (after client-go's clientcmd and rest.InClusterConfig).
//
// Config is parsed once into an immutable value. Everything a file names (CA, client
// certificate and key) is read at load time into memory; only a token *file* is re-read by the
// client (bound service-account tokens rotate), at most once a minute.
//
// TLS is always verified. A kubeconfig asking for insecure-skip-tls-verify is refused unless the
// caller explicitly allows it (LoadOptions::allow_insecure), and even then the choice is visible
// in Config::insecure_skip_tls_verify.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "kvc/common/status.h"

namespace kvc::kube {

struct Config {
  std::string server;                // "https://127.0.0.1:6443" (no trailing slash)
  std::string ca_pem;                // CA bundle; empty = the system trust store
  std::string client_cert_pem;       // client certificate chain
  std::string client_key_pem;        // its private key
  std::string bearer_token;          // static token
  std::filesystem::path token_file;  // re-read periodically; wins over bearer_token
  std::string tls_server_name;       // SNI / verification name override
  bool insecure_skip_tls_verify = false;
  std::string default_namespace = "default";
  std::string context;  // the kubeconfig context this came from ("" in-cluster)
  std::chrono::milliseconds timeout{30000};  // default deadline of a non-watch request
  std::string user_agent = "kvcache-operator/0.1.0";
};

struct LoadOptions {
  std::string context;          // "" = the kubeconfig's current-context
  bool allow_insecure = false;  // accept insecure-skip-tls-verify: true
};

// Reads one kubeconfig file, or several separated by ':' (as $KUBECONFIG lists them; the first
// file that defines a name wins, and the first current-context wins).
Result<Config> loadKubeconfig(std::string_view paths, const LoadOptions& options = {});

// Parses kubeconfig text; relative file references resolve against `base_dir`.
Result<Config> parseKubeconfig(std::string_view text, const std::filesystem::path& base_dir,
                               const LoadOptions& options = {});

inline constexpr std::string_view kServiceAccountDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// In-cluster configuration: KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT from the
// environment, token, ca.crt and namespace from `sa_dir`. FailedPrecondition when not in a Pod.
Result<Config> inClusterConfig(
    const std::filesystem::path& sa_dir = std::filesystem::path(kServiceAccountDir));

// The usual precedence (client-go's): an explicit path; else $KUBECONFIG; else in-cluster when
// KUBERNETES_SERVICE_HOST is set; else ~/.kube/config.
Result<Config> loadDefaultConfig(std::string_view explicit_path = {},
                                 const LoadOptions& options = {});

}  // namespace kvc::kube
