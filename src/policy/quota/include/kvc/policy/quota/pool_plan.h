#pragma once
// One KVCachePool pass, decided (contract §4–§6; STYLE.md §15 "observe → plan → act"). Pure.
//
// The controller observes everything the pass reads into a PoolObservation: the pool and its
// Bindings as cached, its backend (cached, else live), every pool and Binding on that backend's
// master, what still holds each deleting Binding, and the master's ledger. A pass then has two
// stages, each planned by planPool and carried out in this order, stopping at the first write
// that fails (the next pass plans again from what is there):
//
//   The ledger stage (PoolObservation::ledger_written unset): planPool plans 1–4.
//   1. the pool's finalizer                       before anything it guards is written
//   2. the pool in its backend's status.usedBy    so the backend is not deleted under it
//   3. the finalizer of every live Binding on the master, before any write to the master
//   4. the ledger: PUTs, then DELETEs (planLedger), possibly none.
//   The controller carries them out, reads the ledger back when it wrote, scrapes the master's
//   /metrics (once per pass, after the writes: the store computes the grants, and nothing here
//   predicts them) and records what the writes did in ledger_written.
//
//   The report stage (ledger_written set): planPool plans 5–9 from what the master now says.
//   5. the other pools of the master the writes reached (ledgerRipple), passed again now
//   6. a managed multi-tenant master's tenant-quota policy ConfigMap — the master's seed; a
//      failed apply is logged and the pass goes on (no status depends on it)
//   7. per Binding of this pool, in order: its release (the finalizer removed) or its status
//   8. the pool: its release (the backend claim dropped, then its finalizer) or its status
//   9. the outcome: Unavailable when the master failed (after the statuses said so), retried
//      with backoff; else requeueAfter(resync), or sooner when an admission window closes first
//
// A Binding's release waits until the admission window (the Pod webhook's timeout) has passed
// since its deletionTimestamp and nothing holds it: a Pod admitted by a webhook whose cache had
// not seen the deletion yet then holds the Binding (HeldByWorkloads) instead of being injected
// against a released tenant. What holds it is observed (the cache, and a live list of labelled
// Pods once the window has passed and the cache shows none); the window is measured by the
// observer, which owns the clock.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/pool.h"
#include "kvc/common/json.h"
#include "kvc/policy/quota/binding_status.h"
#include "kvc/policy/quota/master_reading.h"
#include "kvc/policy/quota/pool_status.h"
#include "kvc/policy/quota/quota_ledger.h"

namespace kvc::policy {

// The pool's backend as the pass resolves it.
struct PoolBackend {
  BackendResolution resolution = BackendResolution::NotFound;
  std::string name;             // spec.backends[0] when it names exactly one, else ""
  std::string admin_address;    // the backend's Admin endpoint (Resolved)
  std::string client_endpoint;  // the backend's Client endpoint (Resolved)

  bool resolved() const { return resolution == BackendResolution::Resolved; }
};

// NotSingular unless spec.backends names exactly one; NotFound without `backend`;
// EndpointsNotPublished until it reports both an Admin and a Client endpoint.
PoolBackend poolBackend(const api::KVCachePool& pool,
                        const std::optional<api::KVCacheBackend>& backend);

// What still holds one deleting Binding.
struct BindingHold {
  // "ModelDeployment/qwen-chat", "Pod/vllm-0": sorted, unique.
  std::vector<std::string> holders;
  // ModelDeployments in status.usedBy that no longer exist (a live NotFound): never holders.
  std::vector<std::string> gone_users;
  // While the admission window is open: the whole seconds left (at least 1) and when it closes
  // (RFC 3339).
  std::optional<std::int64_t> window_left_seconds;
  std::optional<std::string> window_closes;
};

// What the pass's ledger stage did (set once the controller carried it out).
struct LedgerWrites {
  std::vector<std::string> written;    // domains PUT or removed, in the plan's order; may be none
  std::vector<ObservedTenant> before;  // the ledger before the writes
};

struct PoolObservation {
  std::string now;  // the pass's wall time, RFC 3339
  std::string operator_namespace = "gpustack-system";
  std::chrono::nanoseconds resync = std::chrono::seconds(30);

  api::KVCachePool pool;                          // as cached: metadata, spec, last status
  std::vector<api::KVCachePoolBinding> bindings;  // the pool's own Bindings, as cached
  std::optional<api::KVCacheBackend> backend;     // spec.backends[0], cached, else live

  // Resolved only: every pool naming the backend (this one included) — their status.domains are
  // what this operator registered — and every Binding of those that name it alone: the claims
  // on the master.
  // Shared, not copied: a pass on a master with a thousand Bindings reads them all, every resync.
  std::vector<std::shared_ptr<const api::KVCachePool>> siblings;
  std::vector<std::shared_ptr<const api::KVCachePoolBinding>> master_bindings;

  // Per deleting Binding ("ns/name") of the master or of this pool: what holds it.
  std::map<std::string, BindingHold> holds;
  // Per Binding of this pool ("ns/name"): its Ready engine Pods and their counters (a Binding
  // missing here keeps its hitRate and CacheUsed as they were).
  std::map<std::string, BindingUse> uses;

  // The master, as read this pass (Resolved only; otherwise as the default says: unread): its
  // ledger, and after the ledger stage the ledger as the writes left it and the /metrics scrape.
  MasterReading reading;
  // Unset before the ledger stage; set after it.
  std::optional<LedgerWrites> ledger_written;
};

// A status to write, with what it was decided from: a write that meets a newer object (a
// conflict, or the cache moved since the observation) is decided again from that object with
// the same facts.
struct BindingStatusPlan {
  std::string key;  // "ns/name"
  BindingFacts facts;
  api::KVCachePoolBinding::Status status;
};

struct PoolStatusPlan {
  PoolFacts facts;
  api::KVCachePool::Status status;
};

// One stage's plan: 1–4 before the ledger stage, 5–9 after it (the other fields stay empty).
struct PoolPlan {
  // 1–3.
  bool add_pool_finalizer = false;
  bool claim_backend = false;
  std::vector<std::string> binding_finalizers;  // "ns/name", in the master's order
  // 4.
  LedgerPlan ledger;
  // 5.
  std::vector<std::string> ripple;
  // 6. The ConfigMap to apply, or why it was not rendered.
  std::optional<Json> tenant_policy;
  std::optional<std::string> tenant_policy_error;
  // 7. Per Binding of the pool, in the cache's order: its release (the finalizer goes) or its
  // status (a deleting Binding that is not ours has neither).
  struct BindingStep {
    std::string key;  // "ns/name"
    std::string domain;
    bool release = false;
    std::optional<BindingStatusPlan> status;
  };
  std::vector<BindingStep> bindings;
  // 8. Exactly one of: the pool released (its backend claim dropped when it has a backend, then
  // its finalizer) or its status written.
  bool release_pool = false;
  std::optional<PoolStatusPlan> pool_status;
  // 9.
  std::optional<std::string> store_failure;  // the master's first failure this pass
  std::chrono::nanoseconds requeue_after = std::chrono::seconds(30);

  bool writesLedger() const { return !ledger.puts.empty() || !ledger.deletes.empty(); }
};

// The plan of the stage the observation is at (see above).
PoolPlan planPool(const PoolObservation& seen);

// The master's reading the plan's statuses were decided from: the observed one, or — when the
// backend does not resolve, so nothing was read — one that says why. A status decided again
// from a newer object (a conflict) uses the same.
MasterReading passReading(const PoolObservation& seen);

// The admission window of a Binding deleted `elapsed` ago: the whole seconds left (at least 1),
// or nullopt once it has passed.
std::optional<std::int64_t> admissionWindowLeft(std::chrono::system_clock::duration elapsed,
                                                std::chrono::system_clock::duration window);

}  // namespace kvc::policy
