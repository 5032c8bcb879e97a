#pragma once
// The self-managed webhook certificate, kept on every replica of `kvcache operator`: one Secret
// (type kubernetes.io/tls, keys ca.crt, ca.key, tls.crt, tls.key) holds a CA and the serving
// certificate it signed for the webhook Service. Each pass reads the Secret, creates or renews
// what policy::planWebhookCertificate says (optimistic concurrency: when two replicas race, one
// write wins and the other reads it back), writes tls.crt/tls.key into a directory the webhook
// server re-reads, and sets the caBundle of the named webhook configurations to ca.crt.
// Replicas need no Lease for this: they all converge on the one Secret.

#include <chrono>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "kvc/common/clock.h"
#include "kvc/common/status.h"
#include "kvc/kube/client.h"
#include "kvc/policy/admission/webhook_certificate.h"

namespace kvc::webhook {

struct CertificateKeeperOptions {
  std::string namespace_name;  // of the Secret and of the Service
  std::string secret_name;
  std::string service_name;
  // Mutating- or ValidatingWebhookConfiguration names whose caBundle is kept (either kind).
  std::vector<std::string> webhook_configurations;
  std::string cert_dir;  // receives tls.crt, tls.key and ca.crt
  std::chrono::seconds period{60};
  std::chrono::seconds retry{5};
};

struct Pems;  // the Secret's values, decoded (certificate_keeper.cc)

class CertificateKeeper {
public:
  // `clock` decides when certificates are due (wallNow) and paces the passes.
  CertificateKeeper(kube::ClientPtr client, CertificateKeeperOptions options,
                    const Clock& clock = realClock());
  ~CertificateKeeper();

  // One pass: Secret, files, caBundles. Safe to call again at any time.
  Status syncOnce(std::stop_token stop = {});
  // Repeats syncOnce every `retry` until the files exist (the webhook server cannot start
  // without them) or `stop` is requested or `timeout` passes.
  Status syncUntilReady(std::stop_token stop, std::chrono::seconds timeout);
  // Keeps syncing in the background: every `period`, every `retry` after a failure, and at once
  // whenever the Secret changes or goes (a watch by name): one replica's renewal, or a deleted
  // Secret, reaches every replica in seconds, not at its next period.
  void start();
  void stop();

  std::string certFile() const { return options_.cert_dir + "/tls.crt"; }
  std::string keyFile() const { return options_.cert_dir + "/tls.key"; }

private:
  Status ensureSecret(Pems& pems, std::stop_token stop);
  Status writeFiles(const Pems& pems);
  Status syncCaBundles(const std::string& ca_pem, std::stop_token stop);
  void watchSecret(std::stop_token stop);

  kube::ClientPtr client_;
  CertificateKeeperOptions options_;
  const Clock& clock_;
  std::mutex mutex_;  // one pass at a time
  // The kind each configuration name was found as (passes run under mutex_).
  std::map<std::string, const kube::ResourceType*> kinds_;
  std::jthread thread_;
  std::jthread watcher_;  // the Secret, watched by name: a change is synced at once
};

}  // namespace kvc::webhook
