#!/usr/bin/env bash
# A master without multi-tenancy (no --enable_multi_tenants): the no-ledger path. The pool says
# QuotaLedgerAvailable=False/MultiTenancyDisabled and is Ready (a single-tenant pool); the
# Binding reports QuotaGranted=True/Unenforced and QuotaObserved=True/NoTenantLedger with no
# figure at all; CapacityAllocatable falls back to master_total_capacity_bytes; the Pod webhook
# injects with no tenant id. A second domain on that master is refused at admission.
. "$(dirname "$0")/../lib.sh"
kvc_quota_init
kvc_store_up nomt --no-multi-tenancy --members 1 --segment 64MiB
backend=ext-$KVC_ID pool=pool-$KVC_ID
ns=$(kvc_fresh_namespace single)
kvc_external_backend "$backend"
kvc_pool "$pool" "$backend" 1Gi >/dev/null
kvc_binding "$ns" only "$pool" 64Mi >/dev/null
kvc_wait_for 30 "the pool takes the no-ledger path" \
  kvc_cond_is kvcp "$pool" QuotaLedgerAvailable False/MultiTenancyDisabled
kvc_wait_for 30 "the pool is Ready" kvc_phase_is kvcp "$pool" Ready
kvc_assert_contains "its phase message says single-tenant" "single-tenant pool" \
  "$(kvc_jq kvcp "$pool" .status.phaseMessage)"
kvc_assert_eq "QuotaPolicyWritable mirrors it" Unknown/MultiTenancyDisabled \
  "$(kvc_cond kvcp "$pool" QuotaPolicyWritable)"
kvc_assert_eq "CapacityAllocatable from the total capacity" True/Allocatable \
  "$(kvc_cond kvcp "$pool" CapacityAllocatable)"
kvc_assert_contains "which bounds every write alike" "64Mi" \
  "$(kvc_jq kvcp "$pool" '.status.conditions[] | select(.type == "CapacityAllocatable") | .message')"
kvc_wait_for 30 "the Binding is Ready" kvc_phase_is kvcpb "$ns/only" Ready
kvc_assert_eq "QuotaGranted=True/Unenforced" True/Unenforced "$(kvc_cond kvcpb "$ns/only" QuotaGranted)"
kvc_assert_eq "QuotaObserved=True/NoTenantLedger" True/NoTenantLedger \
  "$(kvc_cond kvcpb "$ns/only" QuotaObserved)"
kvc_assert_eq "no EFFECTIVE figure (absent, not 0)" "null null null" \
  "$(kvc_jq kvcpb "$ns/only" '[.status.effectiveQuota, .status.requestedQuota, .status.usage] | map(tostring) | join(" ")')"
kvc_assert_eq "kubectl get kvcpb shows an empty EFFECTIVE column" "Pool=$pool Effective= Phase=Ready" \
  "$(kubectl -n "$ns" get kvcpb only -o json | jq -r '"Pool=\(.spec.poolRef.name) Effective=\(.status.effectiveQuota // "") Phase=\(.status.phase)"')"
injected=$(kubectl create --dry-run=server -o json -f - <<YAML | jq -r '.metadata.annotations["kvcache.gpustack.ai/injected"]'
apiVersion: v1
kind: Pod
metadata:
  name: vllm
  namespace: $ns
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: only, kvcache.gpustack.ai/engine: vLLM}
spec:
  containers: [{name: c, image: x, command: [vllm], args: [serve, m]}]
YAML
)
kvc_assert_eq "the Pod is injected with no tenant" false "$(jq -r .tenantInjected <<<"$injected")"
kvc_assert_refused "a second domain on a master without a ledger is refused" \
  "keeps no tenant ledger" kvc_binding "$ns" second "$pool" 64Mi another-domain
kvc_done
