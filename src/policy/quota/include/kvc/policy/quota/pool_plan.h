#pragma once
// One KVCachePool pass, decided (contract §4–§6; STYLE.md §15 "observe → plan → act"). Pure.
//
// The controller observes everything the pass reads into a PoolObservation: the pool and its
// Bindings as cached, its backend (cached, else live), every pool and Binding on that backend's
// master, what still holds each deleting Binding, and what the master said (its ledger and
// /metrics). planPool turns the observation into the PoolPlan, which the controller carries out
// in this order, stopping at the first write that fails (the next pass plans again from what is
// there):
//
//   1. the pool's finalizer                       before anything it guards is written
//   2. the pool in its backend's status.usedBy    so the backend is not deleted under it
//   3. the finalizer of every live Binding on the master, before any write to the master
//   4. the ledger: PUTs, then DELETEs (planLedger).
//      The store computes the grants, so a plan that writes the ledger ends here: the controller
//      reads the ledger back and scrapes the master again, records what the writes did
//      (PoolObservation::ledger_written) and plans again. That second plan writes no ledger and
//      none of 1–3 (a plan with ledger writes got past them), and decides the rest from what the
//      master now says.
//   5. the other pools of the master the writes reached (ledgerRipple), passed again now
//   6. a managed multi-tenant master's tenant-quota policy ConfigMap — the master's seed; a
//      failed apply is logged and the pass goes on (no status depends on it)
//   7. per Binding of this pool: its release (the finalizer removed) or its status
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

// What this pass's ledger writes did (set only after the controller carried them out).
struct LedgerWrites {
  std::vector<std::string> written;     // domains PUT or removed, in the plan's order
  std::vector<ObservedTenant> before;   // the ledger before the writes
};

struct PoolObservation {
  std::string now;  // the pass's wall time, RFC 3339
  std::string operator_namespace = "gpustack-system";
  std::int64_t resync_seconds = 30;

  api::KVCachePool pool;                          // as cached: metadata, spec, last status
  std::vector<api::KVCachePoolBinding> bindings;  // the pool's own Bindings, as cached
  std::optional<api::KVCacheBackend> backend;     // spec.backends[0], cached, else live

  // Resolved only: every pool on the backend (this one included), and every Binding of those.
  std::vector<api::KVCachePool> siblings;
  std::vector<api::KVCachePoolBinding> master_bindings;

  // Per deleting Binding ("ns/name") of the master or of this pool: what holds it.
  std::map<std::string, BindingHold> holds;

  // The master, as read this pass (Resolved only; otherwise as the default says: unread).
  MasterReading reading;
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

struct PoolPlan {
  // 1–3.
  bool add_pool_finalizer = false;
  bool claim_backend = false;
  std::vector<std::string> binding_finalizers;  // "ns/name", in the master's order
  // 4. Non-empty: the pass writes it, observes the master again and plans again.
  LedgerPlan ledger;
  // 5.
  std::vector<std::string> ripple;
  // 6. The ConfigMap to apply, or why it was not rendered.
  std::optional<Json> tenant_policy;
  std::optional<std::string> tenant_policy_error;
  // 7.
  std::vector<std::string> release_bindings;  // "ns/name": the finalizer goes
  std::vector<BindingStatusPlan> binding_statuses;
  // 8. Exactly one of: the pool released (its backend claim dropped when it has a backend, then
  // its finalizer) or its status written.
  bool release_pool = false;
  std::optional<PoolStatusPlan> pool_status;
  // 9.
  std::optional<std::string> store_failure;  // the master's first failure this pass
  std::int64_t requeue_after_seconds = 30;

  bool writesLedger() const { return !ledger.puts.empty() || !ledger.deletes.empty(); }
};

PoolPlan planPool(const PoolObservation& seen);

// The master's reading the plan's statuses were decided from: the observed one, or — when the
// backend does not resolve, so nothing was read — one that says why. A status decided again
// from a newer object (a conflict) uses the same.
MasterReading passReading(const PoolObservation& seen);

// The Bindings of a pool that is gone (the pool pass's orphans): the keys of those deleting with
// this operator's finalizer, which are let go (no ledger is owed by a pool that does not
// exist); live ones wait for their pool to come back.
std::vector<std::string> orphansToRelease(const std::vector<api::KVCachePoolBinding>& bindings);

// The admission window of a Binding deleted `elapsed` ago: the whole seconds left (at least 1),
// or nullopt once it has passed.
std::optional<std::int64_t> admissionWindowLeft(std::chrono::system_clock::duration elapsed,
                                                std::chrono::system_clock::duration window);

}  // namespace kvc::policy
