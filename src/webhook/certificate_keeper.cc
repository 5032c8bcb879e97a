#include "kvc/webhook/certificate_keeper.h"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kvc/common/base64.h"
#include "kvc/kube/resource.h"
#include "kvc/webhook/certificates.h"

namespace kvc::webhook {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCaCert = "ca.crt";
constexpr const char* kCaKey = "ca.key";
constexpr const char* kTlsCert = "tls.crt";
constexpr const char* kTlsKey = "tls.key";

// A Secret's data value, decoded ("" when absent or not base64).
std::string secretValue(const Json& data, const char* key) {
  if (!data.is_object() || !data.contains(key) || !data[key].is_string()) {
    return {};
  }
  auto decoded = base64Decode(data[key].get<std::string>());
  return decoded.ok() ? *decoded : std::string();
}

// The first PEM certificate of a bundle (ca.crt holds the current CA first, then the previous
// one while a rotation settles).
std::string firstPem(const std::string& bundle) {
  const std::string end = "-----END CERTIFICATE-----";
  const auto at = bundle.find(end);
  return at == std::string::npos ? bundle : bundle.substr(0, at + end.size()) + "\n";
}

policy::CertificateSecretState stateOf(const Json& data) {
  policy::CertificateSecretState state;
  const std::string ca_bundle = secretValue(data, kCaCert);
  if (auto ca = inspectCertificate(firstPem(ca_bundle), secretValue(data, kCaKey)); ca.ok()) {
    state.ca = *ca;
  }
  if (auto serving =
          inspectCertificate(secretValue(data, kTlsCert), secretValue(data, kTlsKey), ca_bundle);
      serving.ok()) {
    state.serving = *serving;
  }
  return state;
}

// Writes `content` to `path` through a rename, so a reader never sees half a file.
Status writeAtomically(const fs::path& path, const std::string& content, fs::perms perms) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) {
      return internalError("cannot write " + tmp.string());
    }
  }
  std::error_code ec;
  fs::permissions(tmp, perms, ec);
  fs::rename(tmp, path, ec);
  if (ec) {
    return internalError("cannot rename " + tmp.string() + ": " + ec.message());
  }
  return okStatus();
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CertificateKeeper::CertificateKeeper(kube::ClientPtr client, CertificateKeeperOptions options,
                                     Clock clock)
    : client_(std::move(client)), options_(std::move(options)), clock_(std::move(clock)) {}

CertificateKeeper::~CertificateKeeper() { stop(); }

Status CertificateKeeper::ensureSecret(Json& data, std::stop_token stop) {
  const kube::Api secrets(client_, kube::resources::secrets(), options_.namespace_name);
  const std::vector<std::string> names =
      policy::webhookDnsNames(options_.service_name, options_.namespace_name);
  // A lost race (409) re-reads the winner's Secret and decides again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto current = secrets.getOptional(options_.secret_name, stop);
    if (!current.ok()) {
      return current.error().status();
    }
    data = current->has_value() ? (**current).value("data", Json::object()) : Json::object();
    const policy::CertificateSecretState state = stateOf(data);
    const policy::CertificatePlan plan =
        policy::planWebhookCertificate(state, names, clock_());
    if (plan.action == policy::CertificateAction::Keep) {
      return okStatus();
    }
    const policy::SystemTime now = clock_();
    KeyPair ca{firstPem(secretValue(data, kCaCert)), secretValue(data, kCaKey)};
    std::string ca_bundle = secretValue(data, kCaCert);
    if (plan.action == policy::CertificateAction::IssueAll) {
      KVC_ASSIGN_OR_RETURN(ca, issueCa("kvcache-operator-webhook-ca", now, policy::kWebhookCaValidity));
      // The old CA stays trusted until it expires: replicas still serving its certificate
      // keep answering while they reload.
      ca_bundle = ca.cert_pem;
      if (state.ca && state.ca->not_after > now) {
        ca_bundle += firstPem(secretValue(data, kCaCert));
      }
    }
    KVC_ASSIGN_OR_RETURN(KeyPair serving,
                         issueServing(ca, names, now, policy::kWebhookServingValidity));
    Json next = data;
    next[kCaCert] = base64Encode(ca_bundle);
    next[kCaKey] = base64Encode(ca.key_pem);
    next[kTlsCert] = base64Encode(serving.cert_pem);
    next[kTlsKey] = base64Encode(serving.key_pem);
    kube::ApiResult<Json> written = [&]() -> kube::ApiResult<Json> {
      if (current->has_value()) {
        Json secret = **current;
        secret["data"] = next;
        return secrets.replace(options_.secret_name, secret, {}, stop);
      }
      return secrets.create(
          Json{{"apiVersion", "v1"},
               {"kind", "Secret"},
               {"type", "kubernetes.io/tls"},
               {"metadata",
                {{"name", options_.secret_name},
                 {"namespace", options_.namespace_name},
                 {"labels", {{"app.kubernetes.io/name", "kvcache-operator"},
                             {"app.kubernetes.io/component", "webhook-certificate"}}}}},
               {"data", next}},
          {}, stop);
    }();
    if (written.ok()) {
      spdlog::info("webhook certificate: {}: {} Secret {}/{} ({}, valid until one year from now)",
                   plan.reason,
                   plan.action == policy::CertificateAction::IssueAll ? "issued a new CA and a "
                                                                        "serving certificate into"
                                                                      : "renewed the serving "
                                                                        "certificate in",
                   options_.namespace_name, options_.secret_name, names.front());
      data = next;
      return okStatus();
    }
    if (!written.error().isConflict() && !written.error().isAlreadyExists()) {
      return written.error().status();
    }
    spdlog::debug("webhook certificate: another replica wrote the Secret first; reading it");
  }
  return unavailable("webhook certificate: the Secret kept changing under three attempts");
}

Status CertificateKeeper::writeFiles(const Json& data) {
  std::error_code ec;
  fs::create_directories(options_.cert_dir, ec);
  if (ec) {
    return internalError("cannot create " + options_.cert_dir + ": " + ec.message());
  }
  const fs::path dir(options_.cert_dir);
  const std::string cert = secretValue(data, kTlsCert);
  const std::string key = secretValue(data, kTlsKey);
  if (cert.empty() || key.empty()) {
    return internalError("the Secret holds no serving certificate");
  }
  if (readFile(dir / kTlsCert) == cert && readFile(dir / kTlsKey) == key) {
    return okStatus();
  }
  // Key first, then the certificate: the server reloads when the certificate changes.
  KVC_RETURN_IF_ERROR(writeAtomically(dir / kTlsKey, key, fs::perms::owner_read | fs::perms::owner_write));
  KVC_RETURN_IF_ERROR(writeAtomically(dir / kCaCert, secretValue(data, kCaCert), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read));
  KVC_RETURN_IF_ERROR(writeAtomically(dir / kTlsCert, cert, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read));
  spdlog::info("webhook certificate: wrote {}", (dir / kTlsCert).string());
  return okStatus();
}

Status CertificateKeeper::syncCaBundles(const std::string& ca_pem, std::stop_token stop) {
  const std::string bundle = base64Encode(ca_pem);
  Status result = okStatus();
  for (const std::string& name : options_.webhook_configurations) {
    bool found = false;
    for (const kube::ResourceType* kind : {&kube::resources::mutatingWebhookConfigurations(),
                                           &kube::resources::validatingWebhookConfigurations()}) {
      const kube::Api api(client_, *kind);
      auto configuration = api.getOptional(name, stop);
      if (!configuration.ok()) {
        result = configuration.error().status();
        continue;
      }
      if (!configuration->has_value()) {
        continue;
      }
      found = true;
      const std::optional<Json> patch = policy::caBundlePatch(**configuration, bundle);
      if (!patch) {
        continue;
      }
      auto patched = api.patch(name, kube::JsonPatch{*patch}, {}, stop);
      if (!patched.ok()) {
        // A failed test (the webhooks were reordered meanwhile) is retried on the next pass.
        result = patched.error().status();
        continue;
      }
      spdlog::info("webhook certificate: caBundle of {} {} set", kind->kind, name);
    }
    if (!found) {
      spdlog::warn("webhook certificate: no webhook configuration named {} (yet)", name);
    }
  }
  return result;
}

Status CertificateKeeper::syncOnce(std::stop_token stop) {
  std::lock_guard lock(mutex_);
  Json data;
  KVC_RETURN_IF_ERROR(ensureSecret(data, stop));
  KVC_RETURN_IF_ERROR(writeFiles(data));
  return syncCaBundles(secretValue(data, kCaCert), stop);
}

Status CertificateKeeper::syncUntilReady(std::stop_token stop, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const Status synced = syncOnce(stop);
    // The files are what the server needs; a caBundle not yet patched is retried in the
    // background (the configurations may be applied after the operator).
    if (synced.ok() || fs::exists(certFile())) {
      if (!synced.ok()) {
        spdlog::warn("webhook certificate: {}", synced.message());
      }
      return okStatus();
    }
    if (stop.stop_requested() || std::chrono::steady_clock::now() >= deadline) {
      return synced;
    }
    spdlog::warn("webhook certificate: {} (retrying in {}s)", synced.message(),
                 options_.retry.count());
    std::mutex m;
    std::unique_lock lock(m);
    std::condition_variable_any().wait_for(lock, stop, options_.retry, [] { return false; });
  }
}

void CertificateKeeper::start() {
  thread_ = std::jthread([this](std::stop_token stop) {
    std::mutex m;
    std::condition_variable_any wake;
    while (!stop.stop_requested()) {
      const Status synced = syncOnce(stop);
      if (!synced.ok() && !stop.stop_requested()) {
        spdlog::warn("webhook certificate: {} (retrying in {}s)", synced.message(),
                     options_.retry.count());
      }
      std::unique_lock lock(m);
      wake.wait_for(lock, stop, synced.ok() ? options_.period : options_.retry,
                    [] { return false; });
    }
  });
}

void CertificateKeeper::stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

}  // namespace kvc::webhook
