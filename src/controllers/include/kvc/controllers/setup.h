#pragma once
// What every controller's setupWithManager reads: which objects this operator reconciles, where
// the store runs, how many workers, and how the masters are reached.

#include <memory>
#include <string>

#include "kvc/controllers/store_access.h"
#include "kvc/runtime/settings_cache.h"

namespace kvc::controllers {

struct ControllerSetup {
  // Only objects of our kinds whose labels match this selector are reconciled ("" = all):
  // lets several operators (or a test's) share one cluster, each with its own objects.
  std::string selector;
  // Only this namespace's Bindings, Pods and ModelDeployments ("" = every namespace).
  std::string watch_namespace;
  std::string operator_namespace = "gpustack-system";
  int workers = 2;
  AdminClientFactory stores;  // default: httpAdminClients() with the store credentials
  // Until when this replica may write to a store (the elector's fence; always without election).
  // addControllers takes the manager's when unset: its default store clients are fenced by it,
  // and the pool controller writes no status once it has passed.
  store::WriteFence leading_until;
  // The Settings, decoded once for every controller (so they never disagree, and a malformed
  // value is logged once); addControllers makes it from the Settings informer when unset.
  std::shared_ptr<const runtime::SettingsCache> settings;
};

}  // namespace kvc::controllers
