#include "kvc/webhook/certificate_keeper.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kvc/common/base64.h"
#include "kvc/kube/resource.h"
#include "kvc/runtime/certificates.h"

namespace kvc::webhook {
namespace {

using runtime::inspectCertificate;
using runtime::issueCa;
using runtime::issueServing;
using runtime::KeyPair;

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

}  // namespace

// The Secret's four values, decoded once per pass.
struct Pems {
  std::string ca_bundle;  // the current CA first, then the previous one while a rotation settles
  std::string ca_key;
  std::string tls_cert;
  std::string tls_key;

  static Pems of(const Json& data) {
    return {secretValue(data, kCaCert), secretValue(data, kCaKey), secretValue(data, kTlsCert),
            secretValue(data, kTlsKey)};
  }
  Json data() const {
    return {{kCaCert, base64Encode(ca_bundle)},
            {kCaKey, base64Encode(ca_key)},
            {kTlsCert, base64Encode(tls_cert)},
            {kTlsKey, base64Encode(tls_key)}};
  }
};

namespace {

// The first PEM certificate of a bundle: the CA a rotation keeps trusting, without its own
// predecessor.
std::string firstPem(const std::string& bundle) {
  const std::string end = "-----END CERTIFICATE-----";
  const auto at = bundle.find(end);
  return at == std::string::npos ? bundle : bundle.substr(0, at + end.size()) + "\n";
}

// inspectCertificate reads the first certificate of the bundle: the current CA.
policy::CertificateSecretState stateOf(const Pems& pems) {
  policy::CertificateSecretState state;
  if (auto ca = inspectCertificate(pems.ca_bundle, pems.ca_key); ca.ok()) {
    state.ca = *ca;
  }
  if (auto serving = inspectCertificate(pems.tls_cert, pems.tls_key, pems.ca_bundle);
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
                                     const Clock& clock)
    : client_(std::move(client)), options_(std::move(options)), clock_(clock) {}

CertificateKeeper::~CertificateKeeper() { stop(); }

Status CertificateKeeper::ensureSecret(Pems& pems, std::stop_token stop) {
  const kube::Api secrets(client_, kube::resources::secrets(), options_.namespace_name);
  const std::vector<std::string> names =
      policy::webhookDnsNames(options_.service_name, options_.namespace_name);
  // A lost race (409) re-reads the winner's Secret and decides again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto current = secrets.getOptional(options_.secret_name, stop);
    if (!current.ok()) {
      return current.error().status();
    }
    const Json data =
        current->has_value() ? (**current).value("data", Json::object()) : Json::object();
    pems = Pems::of(data);
    const policy::CertificateSecretState state = stateOf(pems);
    const policy::SystemTime now = clock_.wallNow();
    const policy::CertificatePlan plan = policy::planWebhookCertificate(state, names, now);
    if (plan.action == policy::CertificateAction::Keep) {
      return okStatus();
    }
    Pems next = pems;
    KeyPair ca{pems.ca_bundle, pems.ca_key};  // issueServing signs with the bundle's first CA
    if (plan.action == policy::CertificateAction::IssueAll) {
      KVC_ASSIGN_OR_RETURN(ca,
                           issueCa("kvcache-operator-webhook-ca", now, policy::kWebhookCaValidity));
      // The old CA stays trusted until it expires: replicas still serving its certificate
      // keep answering while they reload.
      next.ca_bundle = ca.cert_pem;
      if (state.ca && state.ca->not_after > now) {
        next.ca_bundle += firstPem(pems.ca_bundle);
      }
      next.ca_key = ca.key_pem;
    }
    KVC_ASSIGN_OR_RETURN(KeyPair serving,
                         issueServing(ca, names, now, policy::kWebhookServingValidity));
    next.tls_cert = serving.cert_pem;
    next.tls_key = serving.key_pem;
    Json next_data = data;
    next_data.update(next.data());
    kube::ApiResult<Json> written = [&]() -> kube::ApiResult<Json> {
      if (current->has_value()) {
        Json secret = **current;
        secret["data"] = next_data;
        return secrets.replace(options_.secret_name, secret, {}, stop);
      }
      return secrets.create(Json{{"apiVersion", "v1"},
                                 {"kind", "Secret"},
                                 {"type", "kubernetes.io/tls"},
                                 {"metadata",
                                  {{"name", options_.secret_name},
                                   {"namespace", options_.namespace_name},
                                   {"labels",
                                    {{"app.kubernetes.io/name", "kvcache-operator"},
                                     {"app.kubernetes.io/component", "webhook-certificate"}}}}},
                                 {"data", next_data}},
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
      pems = std::move(next);
      return okStatus();
    }
    if (!written.error().isConflict() && !written.error().isAlreadyExists()) {
      return written.error().status();
    }
    spdlog::debug("webhook certificate: another replica wrote the Secret first; reading it");
  }
  return unavailable("webhook certificate: the Secret kept changing under three attempts");
}

Status CertificateKeeper::writeFiles(const Pems& pems) {
  std::error_code ec;
  fs::create_directories(options_.cert_dir, ec);
  if (ec) {
    return internalError("cannot create " + options_.cert_dir + ": " + ec.message());
  }
  const fs::path dir(options_.cert_dir);
  const std::string& cert = pems.tls_cert;
  const std::string& key = pems.tls_key;
  if (cert.empty() || key.empty()) {
    return internalError("the Secret holds no serving certificate");
  }
  if (readFile(dir / kTlsCert) == cert && readFile(dir / kTlsKey) == key) {
    return okStatus();
  }
  // Key first, then the certificate: the server reloads when the certificate changes.
  KVC_RETURN_IF_ERROR(
      writeAtomically(dir / kTlsKey, key, fs::perms::owner_read | fs::perms::owner_write));
  KVC_RETURN_IF_ERROR(writeAtomically(dir / kCaCert, pems.ca_bundle,
                                      fs::perms::owner_read | fs::perms::owner_write |
                                          fs::perms::group_read | fs::perms::others_read));
  KVC_RETURN_IF_ERROR(writeAtomically(dir / kTlsCert, cert,
                                      fs::perms::owner_read | fs::perms::owner_write |
                                          fs::perms::group_read | fs::perms::others_read));
  spdlog::info("webhook certificate: wrote {}", (dir / kTlsCert).string());
  return okStatus();
}

Status CertificateKeeper::syncCaBundles(const std::string& ca_pem, std::stop_token stop) {
  const std::string bundle = base64Encode(ca_pem);
  Status result = okStatus();
  for (const std::string& name : options_.webhook_configurations) {
    // A name is one kind or the other; once found, only that kind is read again.
    auto known = kinds_.find(name);
    std::vector<const kube::ResourceType*> kinds;
    if (known != kinds_.end()) {
      kinds = {known->second};
    } else {
      kinds = {&kube::resources::mutatingWebhookConfigurations(),
               &kube::resources::validatingWebhookConfigurations()};
    }
    bool found = false;
    for (const kube::ResourceType* kind : kinds) {
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
      kinds_[name] = kind;
      const std::optional<Json> patch = policy::caBundlePatch(**configuration, bundle);
      if (!patch) {
        break;
      }
      auto patched = api.patch(name, kube::JsonPatch{*patch}, {}, stop);
      if (!patched.ok()) {
        // A failed test (the webhooks were reordered meanwhile) is retried on the next pass.
        result = patched.error().status();
        break;
      }
      spdlog::info("webhook certificate: caBundle of {} {} set", kind->kind, name);
      break;
    }
    if (!found) {
      kinds_.erase(name);  // deleted, or never applied: look for either kind next time
      spdlog::warn("webhook certificate: no webhook configuration named {} (yet)", name);
    }
  }
  return result;
}

Status CertificateKeeper::syncOnce(std::stop_token stop) {
  std::lock_guard lock(mutex_);
  Pems pems;
  KVC_RETURN_IF_ERROR(ensureSecret(pems, stop));
  KVC_RETURN_IF_ERROR(writeFiles(pems));
  return syncCaBundles(pems.ca_bundle, stop);
}

Status CertificateKeeper::syncUntilReady(std::stop_token stop, std::chrono::seconds timeout) {
  const auto deadline = clock_.now() + timeout;
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
    if (stop.stop_requested() || clock_.now() >= deadline) {
      return synced;
    }
    spdlog::warn("webhook certificate: {} (retrying in {}s)", synced.message(),
                 options_.retry.count());
    clock_.sleepFor(stop, options_.retry);
  }
}

void CertificateKeeper::start() {
  thread_ = std::jthread([this](std::stop_token stop) {
    while (!stop.stop_requested()) {
      const Status synced = syncOnce(stop);
      if (!synced.ok() && !stop.stop_requested()) {
        spdlog::warn("webhook certificate: {} (retrying in {}s)", synced.message(),
                     options_.retry.count());
      }
      clock_.sleepFor(stop, synced.ok() ? options_.period : options_.retry);
    }
  });
  watcher_ = std::jthread([this](std::stop_token stop) { watchSecret(stop); });
}

void CertificateKeeper::watchSecret(std::stop_token stop) {
  const kube::Api secrets(client_, kube::resources::secrets(), options_.namespace_name);
  kube::WatchParams params;
  params.field_selector = "metadata.name=" + options_.secret_name;
  params.timeout_seconds = 300;
  while (!stop.stop_requested()) {
    // Every change of the Secret — another replica's renewal, or its deletion — is taken in
    // hand at once: a pass writes what the Secret now holds, or issues a new one.
    auto ended = secrets.watch(
        params,
        [&](kube::WatchEvent&& event) {
          if (event.type == kube::WatchEventType::Added ||
              event.type == kube::WatchEventType::Modified ||
              event.type == kube::WatchEventType::Deleted) {
            if (Status synced = syncOnce(stop); !synced.ok() && !stop.stop_requested()) {
              spdlog::warn("webhook certificate: {} (the periodic pass retries)", synced.message());
            }
          }
          return !stop.stop_requested();
        },
        stop);
    if (!ended.ok() && !stop.stop_requested()) {
      spdlog::debug("webhook certificate: the Secret watch ended ({}); watching again in {}s",
                    ended.error().describe(), options_.retry.count());
      clock_.sleepFor(stop, options_.retry);
    }
  }
}

void CertificateKeeper::stop() {
  for (std::jthread* thread : {&watcher_, &thread_}) {
    if (thread->joinable()) {
      thread->request_stop();
      thread->join();
    }
  }
}

}  // namespace kvc::webhook
