#!/usr/bin/env bash
# Troubleshooting rows "KVCacheBackend shows Degraded — MembersMounted NoSegments", "KVCachePool
# shows Error — CapacityAllocatable=False" and "KVCachePoolBinding effectiveQuota: 0 —
# QuotaGranted=False/ZeroGranted" (issue 27 §1), as they come together: a managed backend whose
# member group selects no node yet, so its master serves and no member has mounted anything.
#   - the backend: MembersMounted=False/NoSegments ("0 member Pods running"), phase Degraded;
#   - its pool: CapacityAllocatable=False/NothingToAllocate, phase Error, saying every grant is 0;
#   - a Binding on it: QuotaGranted=False/ZeroGranted with effectiveQuota 0, pointing at the
#     pool's CapacityAllocatable;
#   - once a node carries the group's label, its member mounts: Mounted, Allocatable, granted.
set -uo pipefail
. "$(dirname "$0")/../managed/lib.sh"
kvc_init
kvc_require_real_nodes
node=$(awk '{print $1}' <<<"$KVC_REAL_NODE_NAMES")
b=nothing-mounted
label=kvcache.gpustack.ai/test-nothing-mounted
cleanup_nothing_mounted() {
  kubectl label node "$node" "$label-" >/dev/null 2>&1
  [ -n "${ns:-}" ] && kubectl -n "$ns" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  kubectl delete kvcp $b --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'cleanup_nothing_mounted; kvc_cleanup' EXIT

kvc_assert_ok "backend $b, its members selecting $label=yes (no node has it)" \
  managed_backend $b 256Mi '{}' "{$label: \"yes\"}"
kvc_wait_for 240 "its master serves (LeaderAvailable=True)" kvcb_condition_is $b LeaderAvailable True/Serving
kvc_wait_for 60 "MembersMounted=False/NoSegments" kvcb_condition_is $b MembersMounted False/NoSegments
kvc_assert_contains "saying no member Pod runs" "0 member Pods running" "$(object_message kvcb $b MembersMounted)"
kvc_wait_for 30 "phase Degraded" kvcb_phase_is $b Degraded

ns=$(kvc_fresh_namespace nothing-mounted)
kvc_assert_ok "a pool on it" kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: $b}
spec: {backends: [$b], quota: {total: 1Gi}}
YAML
kvc_assert_ok "a Binding in $ns" pool_binding "$ns" $b team 128Mi
kvc_wait_for 60 "the pool: CapacityAllocatable=False/NothingToAllocate" \
  object_condition_is kvcp $b CapacityAllocatable False/NothingToAllocate
kvc_assert_eq "phase Error" Error "$(kubectl get kvcp $b -o jsonpath='{.status.phase}')"
kvc_assert_contains "its phase message: every grant is 0" "every grant is 0" \
  "$(kubectl get kvcp $b -o jsonpath='{.status.phaseMessage}')"
kvc_wait_for 60 "the Binding: QuotaGranted=False/ZeroGranted" object_condition_is kvcpb team QuotaGranted False/ZeroGranted "$ns"
kvc_wait_for 30 "kvcache diagnose names all three: Degraded, the pool's Error, effectiveQuota: 0" bash -c \
  "diagnose_finds KVCacheBackend $b 'KVCacheBackend shows Degraded' && diagnose_finds KVCachePool $b 'KVCachePool shows Error' && diagnose_finds KVCachePoolBinding $ns/team 'KVCachePoolBinding effectiveQuota: 0'"
kvc_assert_eq "effectiveQuota 0 (read from the master, not absent)" 0 \
  "$(kubectl -n "$ns" get kvcpb team -o jsonpath='{.status.effectiveQuota}')"
kvc_assert_contains "its message points at the pool's CapacityAllocatable" "Read the pool's CapacityAllocatable" \
  "$(object_message kvcpb team QuotaGranted "$ns")"

t0=$SECONDS
kvc_assert_ok "node $node is labelled $label=yes" kubectl label node "$node" "$label=yes"
kvc_wait_for 180 "its member mounts: MembersMounted=True/Mounted" kvcb_condition_is $b MembersMounted True/Mounted
kvc_wait_for 60 "the pool: CapacityAllocatable=True/Allocatable" object_condition_is kvcp $b CapacityAllocatable True/Allocatable
kvc_wait_for 60 "the Binding is granted" object_condition_is kvcpb team QuotaGranted True/Granted "$ns"
kvc_log "granted $((SECONDS - t0)) s after the label"
kvc_done
