#!/usr/bin/env bash
# Troubleshooting row "KVCachePool QuotaLedgerAvailable=False — MultiTenancyDisabled" and Step 2's
# no-ledger chain on a managed backend (issue 27 §1; quota.single_tenant covers an external
# master): a backend declared leader.multiTenancy: false.
#   - no tenant-quota policy is rendered for it, and its master serves;
#   - a pool on it is admitted with a warning saying ceilings are not enforced; it reports
#     QuotaLedgerAvailable=False/MultiTenancyDisabled and is Ready;
#   - a Binding on it: QuotaGranted=True/Unenforced, no EFFECTIVE figure (absent, not 0).
# Nothing to recover: the declaration is the cause, and ceilings are intentionally not enforced.
set -uo pipefail
. "$(dirname "$0")/../managed/lib.sh"
kvc_init
kvc_require_real_nodes
b=no-ledger
cleanup_no_ledger() {
  [ -n "${ns:-}" ] && kubectl -n "$ns" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  kubectl delete kvcp $b --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'cleanup_no_ledger; kvc_cleanup' EXIT

kvc_assert_ok "backend $b with leader.multiTenancy: false" managed_backend $b 256Mi '{multiTenancy: false}'
kvc_wait_for 240 "it is Ready" kvcb_phase_is $b Ready
kvc_assert_eq "no tenant-quota policy is rendered for it" "" \
  "$(kubectl -n "$KVC_SYSTEM_NAMESPACE" get configmap $b-tenant-quota-policy -o name 2>/dev/null)"

warnings=$(kubectl apply -f - 2>&1 >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: $b}
spec: {backends: [$b], quota: {total: 1Gi}}
YAML
)
kvc_assert_contains "the pool is admitted with a warning: ceilings are not enforced" \
  "declares leader.multiTenancy: false: no per-tenant quota in force. Ceilings are not enforced" "$warnings"
kvc_wait_for 60 "the pool: QuotaLedgerAvailable=False/MultiTenancyDisabled" \
  object_condition_is kvcp $b QuotaLedgerAvailable False/MultiTenancyDisabled
kvc_wait_for 30 "kvcache diagnose notes it (not a fault)" \
  diagnose_finds KVCachePool $b "KVCachePool QuotaLedgerAvailable=False" ""
kvc_wait_for 30 "the pool is Ready" bash -c "[ \"\$(kubectl get kvcp $b -o jsonpath='{.status.phase}')\" = Ready ]"
ns=$(kvc_fresh_namespace no-ledger)
kvc_assert_ok "a Binding on it" pool_binding "$ns" $b only 64Mi
kvc_wait_for 60 "the Binding: QuotaGranted=True/Unenforced" object_condition_is kvcpb only QuotaGranted True/Unenforced "$ns"
kvc_assert_eq "no EFFECTIVE figure (absent, not 0)" "" \
  "$(kubectl -n "$ns" get kvcpb only -o jsonpath='{.status.effectiveQuota}')"
kvc_done
