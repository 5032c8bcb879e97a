// The kubeconfig parser (kube/config.h) on any text: refused with a message, or a Config with an
// http(s) server and no trailing slash, whose TLS is verified unless the caller allowed
// otherwise. Relative file references resolve in a scratch directory holding a CA and a token.
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "kvc/kube/config.h"

namespace {

namespace fs = std::filesystem;

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path path = fs::temp_directory_path() / ("kvc-fuzz-kubeconfig-" + std::to_string(getpid()));
    fs::create_directories(path);
    std::ofstream(path / "ca.crt")
        << "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    std::ofstream(path / "token") << "secret-token\n";
    return path;
  }();
  // Registered once `dir` is built, so it runs before `dir` is destroyed (a handler registered
  // while building it ran after, on a destroyed path, and left every run's directory behind).
  static const bool cleanup = [] {
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    });
    return true;
  }();
  (void)cleanup;
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = kvc::kube::parseKubeconfig(text, scratch());
  kvc::kube::LoadOptions insecure;
  insecure.allow_insecure = true;
  auto lenient = kvc::kube::parseKubeconfig(text, scratch(), insecure);
  if (!config.ok()) {
    check(!config.status().message().empty());
    return 0;
  }
  check(config->server.starts_with("https://") || config->server.starts_with("http://"));
  check(!config->server.ends_with("/"));
  check(!config->context.empty());
  check(!config->insecure_skip_tls_verify);
  check(config->client_cert_pem.empty() == config->client_key_pem.empty());
  // Allowing insecure servers changes nothing for a config that did not ask for one.
  check(lenient.ok() && lenient->server == config->server && !lenient->insecure_skip_tls_verify);
  return 0;
}
