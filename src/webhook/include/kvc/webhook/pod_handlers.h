#pragma once
// The two Pod admission handlers: injection at CREATE (mutating) and the freeze at UPDATE
// (validating). They decide; the server only carries bytes (Istio's four levels: transport,
// adapter, core, decision — these are the adapter).

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "kvc/api/settings.h"
#include "kvc/policy/inject/cluster_view.h"
#include "kvc/policy/inject/inject.h"
#include "kvc/webhook/admission.h"

namespace kvc::webhook {

// Told about every mutating decision, after it is made: metrics, Events, logs. Never blocks the
// admission (implementations queue their work).
class InjectionObserver {
public:
  virtual ~InjectionObserver() = default;
  virtual void onInjection(const AdmissionRequest& request, const policy::Decision& decision,
                           std::chrono::nanoseconds elapsed) = 0;
};

class PodMutator {
public:
  using SettingsSource = std::function<api::Settings()>;

  PodMutator(std::shared_ptr<const policy::ClusterView> cluster, SettingsSource settings,
             std::shared_ptr<InjectionObserver> observer = nullptr);

  // Injects an opted-in Pod at CREATE, or refuses it; anything else is admitted unchanged.
  AdmissionResponse handle(const AdmissionRequest& request) const;

private:
  std::shared_ptr<const policy::ClusterView> cluster_;
  SettingsSource settings_;
  std::shared_ptr<InjectionObserver> observer_;
};

// The freeze (policy/freeze.h) on every path that writes a Pod's metadata: UPDATE of `pods` and
// of `pods/status` that moves the inject label or the two written annotations, and a
// `pods/binding` CREATE that would write one of them; 422 Invalid, one cause per field.
// Everything else is admitted.
AdmissionResponse validatePod(const AdmissionRequest& request);

}  // namespace kvc::webhook
