#!/usr/bin/env bash
# Reuse domains per master, and the validating admission of pools and Bindings through the real
# API server:
#   - the Duplicate refusal per master ("already registered by ns/name", naming the backend);
#     the same domain on another backend is admitted;
#   - two Bindings that raced past admission (the second created unvalidated) are both reported
#     DomainExclusive=False naming the other, and their domain stays out of the ledger;
#   - the other admission rules: a pool on a missing backend, one that names two backends or is
#     re-pointed, a Binding whose ceiling passes the pool's total, an immutable domain edit (all
#     three fields refused at once), a dtype "auto" while the dtype Setting is on, an uppercase
#     dtype; an update that only removes a finalizer is admitted.
. "$(dirname "$0")/../lib.sh"
kvc_quota_init
kvc_store_up one --members 1 --segment 64MiB
one_admin=$STORE_ADMIN
backend=ext-$KVC_ID pool=pool-$KVC_ID
kvc_external_backend "$backend"
kvc_pool "$pool" "$backend" 1Gi >/dev/null
a=$(kvc_fresh_namespace dom-a) b=$(kvc_fresh_namespace dom-b)
kvc_binding "$a" first "$pool" 128Mi shared-$KVC_ID >/dev/null
kvc_wait_for 30 "first is Ready" kvc_phase_is kvcpb "$a/first" Ready

kvc_assert_refused "the same domain on the same master is refused as Duplicate" \
  "spec.domain.name: Duplicate value: \"shared-$KVC_ID\": the reuse domain is already registered by $a/first on KVCacheBackend \"$backend\"" \
  kvc_binding "$b" second "$pool" 128Mi "shared-$KVC_ID"
# Another pool on the same backend is the same master.
kvc_pool "$pool-2" "$backend" 1Gi >/dev/null
kvc_assert_refused "and through another pool on the same backend too" "Duplicate value" \
  kvc_binding "$b" second "$pool-2" 128Mi "shared-$KVC_ID"
# Another master: admitted.
kvc_store_up two --members 1 --segment 64MiB
kvc_external_backend "$backend-2"
kvc_pool "$pool-3" "$backend-2" 1Gi >/dev/null
kvc_assert_ok "the same domain on another backend is admitted" \
  kvc_binding "$b" elsewhere "$pool-3" 128Mi "shared-$KVC_ID"
kvc_wait_for 30 "and is Ready on its own master" kvc_phase_is kvcpb "$b/elsewhere" Ready

# A race past admission: created without the validation label (as a create that raced the
# first one's would have been admitted).
unvalidated='{"kvcache-test.gpustack.ai/reconcile":"true"}'
kvc_binding "$b" racer "$pool" 128Mi "shared-$KVC_ID" 64 bfloat16 "$unvalidated" >/dev/null
kvc_wait_for 30 "the racer reports DomainExclusive=False/DomainClaimedByMultipleBindings" \
  kvc_cond_is kvcpb "$b/racer" DomainExclusive False/DomainClaimedByMultipleBindings
kvc_wait_for 30 "so does the first Binding" \
  kvc_cond_is kvcpb "$a/first" DomainExclusive False/DomainClaimedByMultipleBindings
kvc_assert_contains "the first names the other claimant, not itself" "$b/racer" \
  "$(kvc_jq kvcpb "$a/first" '.status.conditions[] | select(.type == "DomainExclusive") | .message')"
kvc_assert_contains "the racer names the first" "$a/first" \
  "$(kvc_jq kvcpb "$b/racer" '.status.conditions[] | select(.type == "DomainExclusive") | .message')"
kvc_assert_eq "both are Error" "Error Error" \
  "$(kvc_jq kvcpb "$a/first" .status.phase) $(kvc_jq kvcpb "$b/racer" .status.phase)"
kvc_assert_eq "neither reports a figure" "null null" \
  "$(kvc_jq kvcpb "$a/first" .status.effectiveQuota) $(kvc_jq kvcpb "$b/racer" .status.effectiveQuota)"
kvc_assert_eq "the pool lists no contested domain" "" \
  "$(kvc_jq kvcp "$pool" '[.status.domains[]?.name] | join(" ")')"
# Deleting one of them settles it: the other becomes exclusive again.
kubectl -n "$b" delete kvcpb racer --wait=false >/dev/null
kvc_wait_for 60 "after one is deleted the other is exclusive and Ready" kvc_phase_is kvcpb "$a/first" Ready
STORE_ADMIN=$one_admin
kvc_assert_eq "and its domain is in the ledger" "shared-$KVC_ID=134217728/67108864" "$(kvc_ledger)"

# The other admission rules.
kvc_assert_refused "a pool on a backend that does not exist" \
  "spec.backends[0]: Not found: \"missing-$KVC_ID\"" kvc_pool "$pool-x" "missing-$KVC_ID" 1Gi
# The schema refuses these before the webhook is asked (the same answer either way).
kvc_assert_refused "a pool naming two backends" "spec.backends: Too many: 2" \
  kvc_pool "$pool-y" "$backend, $backend-2" 1Gi
kvc_assert_refused "a pool re-pointed at another backend" "spec.backends is immutable" \
  kubectl patch kvcp "$pool" --type=merge -p "{\"spec\":{\"backends\":[\"$backend-2\"]}}"
kvc_assert_refused "a ceiling past the pool's total" \
  "spec.quota.ceiling: Invalid value: \"2Gi\": must be at most the quota.total" \
  kvc_binding "$a" big "$pool" 2Gi big-$KVC_ID
kvc_assert_refused "a ceiling raised past the total on update" "must be at most the quota.total" \
  kubectl -n "$a" patch kvcpb first --type=merge -p '{"spec":{"quota":{"ceiling":"4Gi"}}}'
out=$(kubectl -n "$a" patch kvcpb first --type=merge \
  -p '{"spec":{"domain":{"name":"renamed","blockSize":32,"dtype":"float16"}}}' 2>&1 || true)
kvc_assert_contains "every immutable domain field refused in one answer: name" "spec.domain.name is immutable" "$out"
kvc_assert_contains "blockSize" "spec.domain.blockSize is immutable" "$out"
kvc_assert_contains "dtype" "spec.domain.dtype is immutable" "$out"
kvc_assert_refused "dtype auto while the dtype Setting is on" "spec.domain.dtype: Invalid value: \"auto\"" \
  kvc_binding "$a" auto "$pool" 64Mi auto-$KVC_ID 16 auto
# A pool on a managed backend that declares multiTenancy: false: admitted, with a warning.
kvc_register_cluster_object "kvcachebackend/single-$KVC_ID"
kubectl apply -f - >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: single-$KVC_ID, labels: {"kvcache-test.gpustack.ai/validate": "true"}}
spec:
  connection:
    managed:
      leader: {multiTenancy: false}
      members: [{nodeSelector: {kubernetes.io/os: linux}, medium: DRAM, capacityPerMember: 1Gi}]
YAML
out=$(kvc_pool "$pool-single" "single-$KVC_ID" 1Gi 2>&1)
kvc_assert_contains "a pool on a single-tenant backend is admitted with a warning" \
  "Warning: KVCacheBackend \"single-$KVC_ID\" declares leader.multiTenancy: false: no per-tenant quota in force" "$out"
kvc_assert_ok "a ceiling lowered is admitted" \
  kubectl -n "$a" patch kvcpb first --type=merge -p '{"spec":{"quota":{"ceiling":"64Mi"}}}'
# Finalizer removal is never refused, even with the pool gone.
kubectl -n "$a" patch kvcpb first --type=merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
kvc_assert_ok "an update that only changes finalizers is admitted" \
  kubectl -n "$a" patch kvcpb first --type=json -p '[{"op":"remove","path":"/metadata/finalizers/0"}]'
kvc_done
