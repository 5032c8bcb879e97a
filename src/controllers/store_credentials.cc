#include "kvc/controllers/store_credentials.h"

#include <spdlog/spdlog.h>

#include "kvc/api/backend.h"
#include "kvc/common/base64.h"
#include "kvc/kube/resource.h"
#include "kvc/policy/store/admin_access.h"
#include "kvc/policy/store/store_credentials.h"
#include "kvc/policy/store/store_workload.h"
#include "kvc/runtime/certificates.h"

namespace kvc::controllers {
namespace {

// One Secret's PEM values by key, decoded; and what was read (for a replace).
struct SecretPems {
  std::optional<Json> object;
  std::map<std::string, std::string> pems;

  std::string at(const std::string& key) const {
    auto it = pems.find(key);
    return it == pems.end() ? std::string() : it->second;
  }
};

Result<SecretPems> readSecret(const kube::Api& secrets, std::string_view name) {
  auto current = secrets.getOptional(name);
  if (!current.ok()) {
    return current.error().status();
  }
  SecretPems out;
  out.object = std::move(*current);
  if (out.object) {
    const Json data = out.object->value("data", Json::object());  // named: items() refers to it
    for (const auto& [key, value] : data.items()) {
      if (auto text = base64Decode(value.is_string() ? value.get<std::string>() : ""); text.ok()) {
        out.pems[key] = *text;
      }
    }
  }
  return out;
}

std::optional<CertificateFacts> factsOf(const SecretPems& secret, const std::string& cert,
                                        const std::string& key, const std::string& ca) {
  auto facts = runtime::inspectCertificate(secret.at(cert), secret.at(key), ca);
  return facts.ok() ? std::optional<CertificateFacts>(*facts) : std::nullopt;
}

// Creates or replaces the Secret `name` with `pems` (a conflict is an error: the next pass
// reads the winner).
Status writeSecret(const kube::Api& secrets, const std::string& namespace_name,
                   std::string_view name, const SecretPems& read, const std::string& type,
                   const std::map<std::string, std::string>& pems) {
  Json data = Json::object();
  for (const auto& [key, pem] : pems) {
    data[key] = base64Encode(pem);
  }
  if (read.object) {
    Json secret = *read.object;
    secret["data"] = std::move(data);
    auto written = secrets.replace(name, secret);
    return written.ok() ? okStatus() : written.error().status();
  }
  auto written =
      secrets.create(Json{{"apiVersion", "v1"},
                          {"kind", "Secret"},
                          {"type", type},
                          {"metadata",
                           {{"name", std::string(name)},
                            {"namespace", namespace_name},
                            {"labels",
                             {{"app.kubernetes.io/name", "kvcache-operator"},
                              {"app.kubernetes.io/part-of", "kvcache-operator"},
                              {"app.kubernetes.io/component", "store-admin-credentials"}}}}},
                          {"data", std::move(data)}});
  return written.ok() ? okStatus() : written.error().status();
}

std::map<std::string, std::string> leafPems(const runtime::KeyPair& leaf, const std::string& ca) {
  return {{"tls.crt", leaf.cert_pem}, {"tls.key", leaf.key_pem}, {"ca.crt", ca}};
}

}  // namespace

StoreCredentialKeeper::StoreCredentialKeeper(kube::ClientPtr client, StoreCredentialOptions options,
                                             const Clock& clock)
    : client_(std::move(client)), options_(std::move(options)), clock_(clock) {}

Result<std::shared_ptr<const store::TlsCredentials>> StoreCredentialKeeper::operatorCredentials() {
  std::lock_guard lock(mutex_);
  if (!next_pass_ || clock_.now() >= *next_pass_) {
    Status pass = syncLocked();
    next_pass_ = clock_.now() + (pass.ok() ? options_.period : options_.retry);
    if (!pass.ok()) {
      spdlog::warn("store admin credentials: {}", pass.message());
      if (!current_) {
        return Status(pass.code(),
                      "no credentials for the stores' admin API yet: " + pass.message());
      }
    }
  }
  return current_;
}

Result<std::shared_ptr<const store::TlsCredentials>> StoreCredentialKeeper::namedCredentials(
    const std::string& name) {
  std::lock_guard lock(mutex_);
  const Clock::TimePoint now = clock_.now();
  if (auto it = named_.find(name);
      it != named_.end() && now < it->second.read_at + options_.period) {
    return it->second.credentials;
  }
  const std::string what = "Secret " + options_.namespace_name + "/" + name + " (named by " +
                           std::string(api::kAdminTlsSecretAnnotation) + ")";
  const kube::Api secrets(client_, kube::resources::secrets(), options_.namespace_name);
  auto read = readSecret(secrets, name);
  if (!read.ok()) {
    const bool forbidden = read.status().code() == StatusCode::PermissionDenied;
    return Status(read.status().code(), "cannot read " + what + ": " + read.status().message() +
                                            (forbidden ? "; grant the operator get on it" : ""));
  }
  if (!read->object) {
    return Status(StatusCode::NotFound, what + " does not exist");
  }
  for (const char* key : {"tls.crt", "tls.key", "ca.crt"}) {
    if (read->at(key).empty()) {
      return Status(StatusCode::InvalidArgument, what + " has no " + key);
    }
  }
  auto credentials = std::make_shared<const store::TlsCredentials>(
      store::TlsCredentials{read->at("ca.crt"), read->at("tls.crt"), read->at("tls.key")});
  named_[name] = {now, credentials};
  return credentials;
}

Status StoreCredentialKeeper::syncOnce() {
  std::lock_guard lock(mutex_);
  return syncLocked();
}

Status StoreCredentialKeeper::syncLocked() {
  const std::string& namespace_name = options_.namespace_name;
  const kube::Api secrets(client_, kube::resources::secrets(), namespace_name);
  KVC_ASSIGN_OR_RETURN(SecretPems ca, readSecret(secrets, policy::kStoreCaSecret));
  KVC_ASSIGN_OR_RETURN(SecretPems serving, readSecret(secrets, policy::kStoreAdminTlsSecret));
  KVC_ASSIGN_OR_RETURN(SecretPems op, readSecret(secrets, policy::kStoreOperatorClientSecret));
  KVC_ASSIGN_OR_RETURN(SecretPems metrics, readSecret(secrets, policy::kStoreMetricsClientSecret));
  const std::string ca_pem = ca.at("ca.crt");
  policy::StoreCredentialState state;
  state.ca = factsOf(ca, "ca.crt", "ca.key", "");
  state.serving = factsOf(serving, "tls.crt", "tls.key", ca_pem);
  state.operator_client = factsOf(op, "tls.crt", "tls.key", ca_pem);
  state.metrics_client = factsOf(metrics, "tls.crt", "tls.key", ca_pem);
  const std::string metrics_identity = options_.metrics_identity
                                           ? options_.metrics_identity()
                                           : std::string(policy::kDefaultStoreMetricsIdentity);
  const SystemTime now = clock_.wallNow();
  const policy::StoreCredentialPlan plan =
      policy::planStoreCredentials(state, namespace_name, metrics_identity, now);

  runtime::KeyPair authority{ca_pem, ca.at("ca.key")};
  if (plan.ca) {
    KVC_ASSIGN_OR_RETURN(authority,
                         runtime::issueCa("kvcache-store-ca", now, policy::kStoreCaValidity));
    KVC_RETURN_IF_ERROR(
        writeSecret(secrets, namespace_name, policy::kStoreCaSecret, ca, "Opaque",
                    {{"ca.crt", authority.cert_pem}, {"ca.key", authority.key_pem}}));
  }
  const std::string& trust = authority.cert_pem;
  const auto validity =
      std::chrono::duration_cast<std::chrono::seconds>(policy::kStoreLeafValidity);
  if (plan.serving) {
    KVC_ASSIGN_OR_RETURN(runtime::KeyPair leaf,
                         runtime::issueServing(
                             authority, policy::storeAdminDnsNames(namespace_name), now, validity));
    KVC_RETURN_IF_ERROR(writeSecret(secrets, namespace_name, policy::kStoreAdminTlsSecret, serving,
                                    "kubernetes.io/tls", leafPems(leaf, trust)));
  }
  if (plan.metrics_client) {
    KVC_ASSIGN_OR_RETURN(
        runtime::KeyPair leaf,
        runtime::issueClient(authority, metrics_identity, std::string(policy::kAdminMetricsGroup),
                             now, validity));
    KVC_RETURN_IF_ERROR(writeSecret(secrets, namespace_name, policy::kStoreMetricsClientSecret,
                                    metrics, "kubernetes.io/tls", leafPems(leaf, trust)));
  }
  runtime::KeyPair client{op.at("tls.crt"), op.at("tls.key")};
  if (plan.operator_client) {
    KVC_ASSIGN_OR_RETURN(
        client, runtime::issueClient(authority, std::string(policy::kStoreOperatorIdentity),
                                     std::string(policy::kAdminOperatorGroup), now, validity));
    KVC_RETURN_IF_ERROR(writeSecret(secrets, namespace_name, policy::kStoreOperatorClientSecret, op,
                                    "kubernetes.io/tls", leafPems(client, trust)));
  }
  for (const std::string& reason : plan.reasons) {
    spdlog::info("store admin credentials: issued anew in {}: {}", namespace_name, reason);
  }
  current_ = std::make_shared<const store::TlsCredentials>(
      store::TlsCredentials{trust, client.cert_pem, client.key_pem});
  return okStatus();
}

bool isManagedAdminAddress(const std::string& address, const std::string& store_namespace) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos ||
      address.substr(colon + 1) != std::to_string(policy::kMasterAdminPort)) {
    return false;
  }
  const std::string host = address.substr(0, colon);
  for (const std::string& suffix :
       {"." + store_namespace + ".svc", "." + store_namespace + ".svc.cluster.local"}) {
    if (host.size() > suffix.size() &&
        host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        host.find('.') == host.size() - suffix.size()) {
      return true;
    }
  }
  return false;
}

}  // namespace kvc::controllers
