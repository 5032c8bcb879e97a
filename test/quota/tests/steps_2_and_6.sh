#!/usr/bin/env bash
# The walkthrough's Step 2 and Step 6 as written — pool shared-dram (16Gi), Bindings team-a
# (8Gi, domain default), team-b (8Gi, llama-8b-v1) and qwen-fp8 (4Gi, qwen-fp8-v1) — on an
# external backend pointing at a real master (2 members of 256 MiB). The ceilings ask for 20Gi
# against the pool's 16Gi (QuotaWithinTotal=False/Oversubscribed, a report); the master, with
# 512 MiB mounted, recuts the grants in proportion, and every figure is read back from it.
. "$(dirname "$0")/../lib.sh"
kvc_quota_init
kvc_store_up main --members 2 --segment 256MiB
backend=ext-$KVC_ID pool=shared-dram-$KVC_ID
a=$(kvc_fresh_namespace team-a) b=$(kvc_fresh_namespace team-b)
kvc_external_backend "$backend"
kvc_pool "$pool" "$backend" 16Gi >/dev/null
t0=$(date +%s%N)
kvc_binding "$a" team-a "$pool" 8Gi "" 64 bfloat16 >/dev/null
kvc_wait_for 30 "team-a is Ready" kvc_phase_is kvcpb "$a/team-a" Ready
kvc_log "team-a: created -> Ready with its grant in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
kvc_binding "$b" team-b "$pool" 8Gi llama-8b-v1 16 bfloat16 >/dev/null
kvc_binding "$a" qwen-fp8 "$pool" 4Gi qwen-fp8-v1 16 fp8_e4m3 >/dev/null
kvc_wait_for 30 "team-b is Ready" kvc_phase_is kvcpb "$b/team-b" Ready
kvc_wait_for 30 "qwen-fp8 is Ready" kvc_phase_is kvcpb "$a/qwen-fp8" Ready

# The backend, observed from its master.
kvc_wait_for 30 "the backend is Ready" kvc_phase_is kvcb "$backend" Ready
kvc_assert_eq "CAPACITY is the sum of the segments the members registered" 512Mi \
  "$(kubectl get kvcb "$backend" -o jsonpath='{.status.capacity.total}')"
kvc_assert_eq "ENDPOINT is the Client endpoint" "$STORE_RPC" \
  "$(kubectl get kvcb "$backend" --no-headers | awk '{print $4}')"
kvc_assert_eq "LeaderAvailable" True/Serving "$(kvc_cond kvcb "$backend" LeaderAvailable)"
kvc_assert_eq "CapacityObserved" True/Observed "$(kvc_cond kvcb "$backend" CapacityObserved)"
kvc_assert_eq "MembersMounted" True/Mounted "$(kvc_cond kvcb "$backend" MembersMounted)"
kvc_assert_eq "Deletable: the pool uses it" False/InUse "$(kvc_cond kvcb "$backend" Deletable)"
kvc_assert_eq "usedBy names the pool" "KVCachePool//$pool" \
  "$(kvc_jq kvcb "$backend" '.status.usedBy[] | "\(.kind)/\(.namespace)/\(.name)"')"
kvc_assert_eq "two members, sorted by segmentID, state OK" "2 OK OK" \
  "$(kvc_jq kvcb "$backend" '[.status.members | length, (.[] | .state)] | join(" ")')"
kvc_assert_eq "members are sorted by segmentID" \
  "$(kvc_jq kvcb "$backend" '[.status.members[].segmentID] | sort | join(",")')" \
  "$(kvc_jq kvcb "$backend" '[.status.members[].segmentID] | join(",")')"

# The pool.
kvc_assert_eq "pool phase" Ready "$(kvc_jq kvcp "$pool" .status.phase)"
kvc_assert_eq "clientEndpoint is the backend's Client endpoint" "$STORE_RPC" \
  "$(kvc_jq kvcp "$pool" .status.clientEndpoint)"
for c in BackendResolved/True/Resolved QuotaLedgerAvailable/True/Available \
         QuotaPolicyWritable/True/Writable CapacityAllocatable/True/Allocatable \
         QuotaWithinTotal/False/Oversubscribed; do
  kvc_assert_eq "pool ${c%%/*}" "${c#*/}" "$(kvc_cond kvcp "$pool" "${c%%/*}")"
done
kvc_assert_contains "Oversubscribed gives the sum and the total and says nothing is refused" \
  "sum to 20Gi (21474836480 bytes), past quota.total 16Gi (17179869184 bytes). This is a report, not a refusal" \
  "$(kvc_jq kvcp "$pool" '.status.conditions[] | select(.type == "QuotaWithinTotal") | .message')"
kvc_assert_eq "domains: the three registered domains" "default llama-8b-v1 qwen-fp8-v1" \
  "$(kvc_jq kvcp "$pool" '[.status.domains[].name] | join(" ")')"
kvc_assert_eq "usedBy: the three Bindings" 3 "$(kvc_jq kvcp "$pool" '.status.usedBy | length')"
kvc_assert_eq "usage.total is observed (zero, not absent)" 0 "$(kvc_jq kvcp "$pool" .status.usage.total)"

# The ledger on the master holds exactly the domains, with the ceilings as requested bytes; the
# grants are the master's proportional recut of its 512 MiB, and the Bindings report them.
g8=$(( 536870912 * 8 / 20 )) g4=$(( 536870912 * 4 / 20 ))
# Largest remainders: 214748364.8 x2 and 107374182.4 -> one byte to each of the two 8Gi asks
# (ties broken by tenant id), so the three add up to 536870912.
want="default=8589934592/$((g8 + 1)) llama-8b-v1=8589934592/$((g8 + 1)) qwen-fp8-v1=4294967296/$g4"
kvc_assert_eq "the master's ledger" "$want" "$(kvc_ledger)"
for ref in "$a/team-a:default" "$b/team-b:llama-8b-v1" "$a/qwen-fp8:qwen-fp8-v1"; do
  binding=${ref%%:*} tenant=${ref#*:}
  master=$("$KVCACHE" store status --admin "$STORE_ADMIN" -o json |
    jq -r ".ledger.tenants[] | select(.tenantId == \"$tenant\") | .effectiveBytes")
  kvc_assert_eq "$binding: effectiveQuota is the master's grant" "$master" \
    "$(kvc_jq kvcpb "$binding" .status.effectiveQuota)"
  kvc_assert_eq "$binding: QuotaGranted" True/Granted "$(kvc_cond kvcpb "$binding" QuotaGranted)"
  kvc_assert_eq "$binding: DomainExclusive" True/Exclusive "$(kvc_cond kvcpb "$binding" DomainExclusive)"
  kvc_assert_eq "$binding: QuotaObserved" True/Observed "$(kvc_cond kvcpb "$binding" QuotaObserved)"
  kvc_assert_eq "$binding: usage observed as 0" 0 "$(kvc_jq kvcpb "$binding" .status.usage)"
  kvc_assert_eq "$binding: overQuota observed as false" false "$(kvc_jq kvcpb "$binding" .status.overQuota)"
  kvc_assert_eq "$binding: the finalizer holds it" worker.gpustack.ai/kvcache-pool-binding \
    "$(kvc_jq kvcpb "$binding" '.metadata.finalizers | join(",")')"
  kvc_assert_eq "$binding: observedGeneration" 1 "$(kvc_jq kvcpb "$binding" .status.observedGeneration)"
done
kvc_assert_eq "team-a requestedQuota is the ceiling" 8Gi "$(kvc_jq kvcpb "$a/team-a" .status.requestedQuota)"

# kubectl get shows the seed's columns.
row=$(kubectl -n "$a" get kvcpb team-a --no-headers)
kvc_assert_eq "kubectl get kvcpb: POOL DOMAIN EFFECTIVE USAGE PHASE" \
  "$pool default $((g8 + 1)) 0 Ready" "$(awk '{print $2, $3, $4, $5, $6}' <<<"$row")"

# A second pass over the unchanged master writes nothing: resourceVersions stay put across a
# resync (30 s) — checked over 35 s.
before=$(kubectl get kvcp "$pool" -o jsonpath='{.metadata.resourceVersion}'):$(kubectl -n "$a" get kvcpb team-a -o jsonpath='{.metadata.resourceVersion}'):$(kubectl get kvcb "$backend" -o jsonpath='{.metadata.resourceVersion}')
sleep 35
after=$(kubectl get kvcp "$pool" -o jsonpath='{.metadata.resourceVersion}'):$(kubectl -n "$a" get kvcpb team-a -o jsonpath='{.metadata.resourceVersion}'):$(kubectl get kvcb "$backend" -o jsonpath='{.metadata.resourceVersion}')
kvc_assert_eq "passes over an unchanged master write nothing (pool:binding:backend versions)" "$before" "$after"
kvc_done
