#pragma once
// A KVCachePool's status from one pass (contract §4): BackendResolved, QuotaLedgerAvailable,
// QuotaPolicyWritable, QuotaWithinTotal, CapacityAllocatable and, while deleting, Releasable;
// clientEndpoint, usage.total, domains[] and usedBy[]; the phase over the four axes.
// Pure: the pool's facts and the master's reading in, the whole status out.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/binding.h"
#include "kvc/api/pool.h"
#include "kvc/policy/quota/master_reading.h"

namespace kvc::policy {

enum class BackendResolution {
  NotSingular,            // spec.backends does not name exactly one backend
  NotFound,               // the backend does not exist
  EndpointsNotPublished,  // the backend reports no Admin endpoint yet
  Resolved,
};

struct PoolFacts {
  api::KVCachePool pool;  // spec, metadata, and the status as last written
  BackendResolution resolution = BackendResolution::NotFound;
  std::string backend;          // the name in spec.backends (first), "" when none
  std::string client_endpoint;  // the backend's Client endpoint (Resolved)
  // The pool's Bindings, and which of their domains are contested on the master.
  std::vector<api::KVCachePoolBinding> bindings;
  std::vector<std::string> contested_domains;
  // While deleting: the Bindings that still name the pool ("ns/name"), sorted.
  std::vector<std::string> holding_bindings;
};

api::KVCachePool::Status poolStatus(const PoolFacts& facts, const MasterReading& reading,
                                    std::int64_t generation, std::string_view now);

// Σ ceilings of the Bindings QuotaWithinTotal counts (named, live, not contested), in bytes;
// a ceiling that does not parse is skipped (admission refuses it anyway).
std::int64_t countedCeilings(const PoolFacts& facts);

}  // namespace kvc::policy
