#pragma once
// The Settings as the webhooks and the controllers apply them: decoded from the
// `gpustack-settings` ConfigMap in the informer's cache, so an edit takes effect on the next
// admission or reconcile without a restart.
//
// An absent ConfigMap or key means the built-in default. A malformed value (a boolean Setting
// that is not "true"/"false") keeps the last good Settings and is logged once per version of
// the ConfigMap, rather than flipping the webhook's behaviour on a typo.

#include <mutex>
#include <string>

#include "kvc/api/settings.h"
#include "kvc/runtime/informer.h"
#include "kvc/runtime/store.h"

namespace kvc::runtime {

// The informer the Settings are read from: the one ConfigMap, by name. The webhooks and the
// controllers ask the manager for it with these options, so they share one informer.
InformerOptions settingsInformerOptions();

class SettingsCache {
public:
  // `configMaps` caches the ConfigMaps of the operator namespace; it must outlive this.
  explicit SettingsCache(const runtime::Cache& config_maps);

  api::Settings current() const;

private:
  const runtime::Cache& config_maps_;
  mutable std::mutex mutex_;
  mutable std::string decoded_version_ = "<none>";
  mutable api::Settings settings_;
};

}  // namespace kvc::runtime
