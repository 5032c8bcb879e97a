#pragma once
// A KVCachePoolBinding's status from one pool pass (contract §5): the conditions
// DomainExclusive, QuotaObserved, QuotaGranted, CacheUsed and, while deleting, Releasable; the
// figures requestedQuota, effectiveQuota, usage, overQuota and hitRate (every one absent unless
// observed); and the phase. Pure: the facts and the master's reading in, the whole status out.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/binding.h"
#include "kvc/policy/quota/master_reading.h"
#include "kvc/policy/usage/binding_use.h"

namespace kvc::policy {

struct BindingFacts {
  api::KVCachePoolBinding binding;  // spec, metadata, and the status as last written
  std::string backend;              // the backend (master) the Binding's pool draws on
  // Other live Bindings on this master that claim the same domain ("ns/name").
  std::vector<std::string> contested_with;
  // While deleting: what still references the Binding ("ModelDeployment/qwen-chat",
  // "Pod/vllm-0"), sorted; and, while the admission window is open, when it closes (RFC 3339).
  std::vector<std::string> holders;
  std::optional<std::string> admission_window_closes;
  // While deleting: the names of the ModelDeployments in status.usedBy that no longer exist (a
  // finalizer removed by hand left their entry behind). Dropped from usedBy; never holders.
  std::vector<std::string> gone_users;
  // While deleting: the pool or its backend is gone, so no ledger entry is owed.
  bool nothing_owed = false;
  // While deleting: a live Binding elsewhere on the master claims the same domain now, so the
  // entry is not this Binding's to release.
  bool domain_claimed_elsewhere = false;
  // The Binding's Ready engine Pods as the counter reader last saw them: status.hitRate and
  // CacheUsed (policy/usage/binding_use.h). Absent: neither is touched (carried over).
  std::optional<BindingUse> use;
};

// The whole status; conditions set with setConditions at `generation` and `now`.
api::KVCachePoolBinding::Status bindingStatus(const BindingFacts& facts,
                                              const MasterReading& reading, std::int64_t generation,
                                              std::string_view now);

// True when a deleting Binding may lose its finalizer: nothing holds it, the admission window
// has passed, and its ledger entry is gone (or was never owed).
bool bindingReleased(const BindingFacts& facts, const MasterReading& reading);

}  // namespace kvc::policy
