#pragma once
// The validating admission of KVCachePool and KVCachePoolBinding (CREATE and UPDATE; contract §1,
// §4, §5): the adapter between an AdmissionReview and policy::admitPool / admitBinding. It looks
// up what a rule reads — from the informer caches first, then live on a miss, where only a
// NotFound counts as "does not exist" and any other failure is an internal error, never a
// refusal of the object — and answers with one Invalid refusal naming every field at fault,
// or an admission with warnings.
//
// What it reads, and when (a rule that reads outside state runs only when its field moved):
//   pool CREATE      the backend spec.backends[0] names
//   Binding CREATE   its pool; the pool's backend; every Binding of every pool on that backend
//                    (the Duplicate rule and "one domain on a master without a ledger")
//   Binding UPDATE   its pool, only when spec.quota.ceiling moved
// Deletes are not registered, and a finalizer-removal update changes no rule's input.

#include <chrono>
#include <functional>
#include <memory>

#include "kvc/api/settings.h"
#include "kvc/kube/client.h"
#include "kvc/runtime/reader.h"
#include "kvc/runtime/store.h"
#include "kvc/webhook/admission.h"

namespace kvc::webhook {

inline constexpr std::string_view kValidatePoolPath = "/validate-worker-gpustack-ai-v1-kvcachepool";
inline constexpr std::string_view kValidateBindingPath =
    "/validate-worker-gpustack-ai-v1-kvcachepoolbinding";

struct QuotaCaches {
  const runtime::Cache* pools = nullptr;  // indexed api::kPoolsByBackend
  const runtime::Cache* backends = nullptr;
  const runtime::Cache* bindings = nullptr;  // indexed api::kBindingsByPool
};

class QuotaAdmission {
public:
  using SettingsSource = std::function<api::Settings()>;

  // `caches` may hold nulls: every read is then live (tests, a webhook without informers).
  QuotaAdmission(kube::ClientPtr client, QuotaCaches caches, SettingsSource settings,
                 std::chrono::milliseconds live_timeout = std::chrono::milliseconds(2000));

  AdmissionResponse admitPool(const AdmissionRequest& request) const;
  AdmissionResponse admitBinding(const AdmissionRequest& request) const;

private:
  kube::ClientPtr client_;
  QuotaCaches caches_;
  SettingsSource settings_;
  std::chrono::milliseconds live_timeout_;
  // The pool and the backend a rule reads: cached, else live within `live_timeout`.
  runtime::CachedReader pool_reader_;
  runtime::CachedReader backend_reader_;
};

}  // namespace kvc::webhook
