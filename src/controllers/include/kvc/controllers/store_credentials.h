#pragma once
// The certificates of the managed stores' admin API (policy/store/store_credentials.h says which
// Secrets and when each is issued), kept by the operator replica that runs the controllers: the
// admin client factory asks for the operator's credentials before every call to a managed
// master, and that is when the Secrets are read and, where the plan says so, written. A pass
// runs at most every `period` while it succeeds (every `retry` after a failure), so a steady
// cluster costs four GETs per period and no write. A minute: a Secret an administrator deletes
// (to rotate it) is issued anew within a minute, and the leaders take it within two.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kvc/common/clock.h"
#include "kvc/common/status.h"
#include "kvc/kube/client.h"
#include "kvc/store/http.h"

namespace kvc::controllers {

struct StoreCredentialOptions {
  std::string namespace_name = "gpustack-system";
  // The scraper's name (the Setting kv-cache-store-metrics-identity), read at each pass.
  std::function<std::string()> metrics_identity;
  std::chrono::seconds period{60};
  std::chrono::seconds retry{5};
};

class StoreCredentialKeeper {
public:
  StoreCredentialKeeper(kube::ClientPtr client, StoreCredentialOptions options,
                        const Clock& clock = realClock());

  // The operator's client credentials (Secret kvcache-store-operator-client), after a pass when
  // one is due; an error when there are none and the pass failed.
  Result<std::shared_ptr<const store::TlsCredentials>> operatorCredentials();

  // The client credentials an external backend names (its annotation
  // kvcache.gpustack.ai/admin-tls-secret): the Secret `name` in the keeper's namespace, with
  // tls.crt, tls.key and ca.crt. Read at most once a `period` per name (an administrator's
  // rotation is taken within it); never written. An error names the Secret, the missing key or
  // the refusal to read it (the operator is granted no Secret by another name: the administrator
  // grants `get` on this one, docs/security.md).
  Result<std::shared_ptr<const store::TlsCredentials>> namedCredentials(const std::string& name);

  // One pass now: read the four Secrets, issue what the plan says, write it.
  Status syncOnce();

private:
  Status syncLocked();

  kube::ClientPtr client_;
  StoreCredentialOptions options_;
  const Clock& clock_;
  std::mutex mutex_;  // one pass at a time; guards the members below
  std::optional<Clock::TimePoint> next_pass_;
  std::shared_ptr<const store::TlsCredentials> current_;
  struct Named {
    Clock::TimePoint read_at;
    std::shared_ptr<const store::TlsCredentials> credentials;
  };
  std::map<std::string, Named> named_;  // by Secret name, guarded by mutex_
};

// The admin-client factory for the controllers: http:// to an external master; https:// with
// the keeper's credentials to a managed one (an address <name>.<store namespace>.svc[.cluster.
// local]:9003, which only a managed backend's leader Service has).
bool isManagedAdminAddress(const std::string& address, const std::string& store_namespace);

}  // namespace kvc::controllers
