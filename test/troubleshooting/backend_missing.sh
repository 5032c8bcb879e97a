#!/usr/bin/env bash
# Troubleshooting row "KVCachePool shows Error — BackendResolved=False" (issue 27 §1) on a managed
# backend, as an administrator meets it. Admission refuses a pool naming a backend that does not
# exist, and a backend's deletion waits for its pools, so the row is reached by going around both:
#   - the backend deleted under its pool is held, not removed (phase Deleting,
#     Deletable=False/InUse naming the pool), and the pool keeps resolving it;
#   - the administrator forces it, removing its finalizer as one does with a deletion that seems
#     stuck: the backend goes, and the pool says BackendResolved=False/BackendNotFound naming the
#     backend and the fix (create it), phase Error;
#   - the backend created again under its name: the pool resolves it (BackendResolved=True naming
#     the Client endpoint) and is Ready, and its Binding is granted again.
set -uo pipefail
. "$(dirname "$0")/../managed/lib.sh"
kvc_init
kvc_require_real_nodes
b=held-backend
pool=held-pool
pool_is() { [ "$(kubectl get kvcp $pool -o jsonpath='{.status.phase}' 2>/dev/null)" = "$1" ]; }
cleanup_missing() {
  [ -n "${ns:-}" ] && kubectl -n "$ns" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  kubectl delete kvcp $pool --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'cleanup_missing; kvc_cleanup' EXIT

kvc_assert_ok "backend $b" managed_backend $b 256Mi
kvc_assert_ok "pool $pool on it" managed_pool $pool $b 512Mi
ns=$(kvc_fresh_namespace backend-missing)
kvc_assert_ok "a Binding on it" pool_binding "$ns" $pool team 128Mi
kvc_wait_for 240 "the pool is Ready" pool_is Ready
kvc_wait_for 60 "the Binding is granted" binding_granted "$ns" team

kvc_assert_ok "the backend deleted under its pool" kubectl delete kvcb $b --wait=false
kvc_wait_for 60 "it is held: Deletable=False/InUse" kvcb_condition_is $b Deletable False/InUse
kvc_assert_contains "naming the pool" "$pool" "$(object_message kvcb $b Deletable)"
kvc_assert_eq "phase Deleting" Deleting "$(kvcb_field $b '{.status.phase}')"
kvc_assert_eq "the pool still resolves it" True/Resolved "$(object_condition kvcp $pool BackendResolved)"

kvc_assert_ok "the administrator removes its finalizer" kubectl patch kvcb $b --type=merge \
  -p '{"metadata":{"finalizers":null}}'
kvc_wait_for 60 "the backend is gone" bash -c "! kubectl get kvcb $b >/dev/null 2>&1"
kvc_wait_for 60 "the pool: BackendResolved=False/BackendNotFound" \
  object_condition_is kvcp $pool BackendResolved False/BackendNotFound
kvc_wait_for 30 "kvcache diagnose names it: KVCachePool shows Error" \
  diagnose_finds KVCachePool $pool "KVCachePool shows Error"
message=$(object_message kvcp $pool BackendResolved)
kvc_log "BackendResolved: $message"
kvc_assert_contains "naming the backend and the fix" "KVCacheBackend \"$b\" does not exist. Fix: create it" "$message"
kvc_wait_for 30 "phase Error" pool_is Error

t0=$SECONDS
kvc_assert_ok "the backend created again" managed_backend $b 256Mi
kvc_wait_for 240 "the pool resolves it: BackendResolved=True/Resolved" \
  object_condition_is kvcp $pool BackendResolved True/Resolved
kvc_assert_contains "naming its Client endpoint" "$b-leader.$KVC_SYSTEM_NAMESPACE.svc:50051" \
  "$(object_message kvcp $pool BackendResolved)"
kvc_wait_for 180 "the pool is Ready" pool_is Ready
kvc_wait_for 120 "the Binding is granted again" binding_granted "$ns" team
kvc_log "pool Ready and Binding granted $((SECONDS - t0)) s after the backend was created again"
kvc_done
