#!/usr/bin/env bash
# `kvcache probe` on the real path (issue 26 §1): probe Pods on the real nodes, opted into
# injection on a Binding (the installed webhook configures them), using the pinned wheel's client
# against a managed store whose leader and members run on the real nodes.
#   - two vLLM probes on one Binding (their blocks kept): exit 0; the second finds >= 90 % of the
#     shared-prefix blocks the first wrote (all 8 here) and reads them back intact; the first found
#     none;
#   - a probe with the same seed on another Binding (another tenant) reads none of them;
#   - a probe with the same seed on the first Binding again finds them (across runs), and its
#     cleanup removes every block: the tenant holds nothing afterwards;
#   - two SGLang probes (the environment vehicle, SGLang's key layout) on the same Binding: the
#     same reuse;
#   - a probe whose namespace lets no Pod reach the master (an egress NetworkPolicy): exit 3,
#     failed at connect, the message naming the master and what to check;
#   - a probe whose tenant the master no longer knows (its ledger entry deleted through the admin
#     API, before the operator's next pass registers it again): exit 3, TENANT_NOT_REGISTERED;
#   - the backend's PoolWrites sees the probes' writes (batch writes, as the engines make them);
#   - a probe against a paused master (SIGSTOP): exit 3, stalled, within its deadline;
#   - no probe Pod is left behind, and every Binding is released when deleted (nothing of the
#     probes holds it);
#   - `kvcache status` (also as the kubectl plugin `kubectl kvcache`) shows the backend, its pool
#     and the three Bindings under it with their grants, and no condition of theirs that is not
#     True; `kvcache diagnose` names nothing on them.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
kvcache=${KVC_KVCACHE_BIN:?the kvcache binary (ctest sets KVC_KVCACHE_BIN)}
b=probe-store
seed=probe-$RANDOM
cleanup_probe() {
  signal_store_process "${leader_pod:-none}" mooncake_master CONT >/dev/null 2>&1
  for n in "${ns_a:-}" "${ns_b:-}" "${ns_c:-}"; do
    [ -n "$n" ] && kubectl -n "$n" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  done
  kubectl delete kvcp $b --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'cleanup_probe; kvc_cleanup' EXIT

# probe NAMESPACE BINDING [ARGS...]: runs kvcache probe; the report (JSON) in $report, its exit
# code in $probe_rc.
probe() {
  local ns=$1 binding=$2; shift 2
  probe_rc=0
  report=$("$kvcache" probe -n "$ns" --binding "$binding" --kubeconfig "$KUBECONFIG" \
    --node-selector type=real --seed "$seed" -o json "$@" 2>>"$KVC_CLUSTER_DIR/probe-progress.log") ||
    probe_rc=$?
}

kvc_assert_ok "backend $b" managed_backend $b 256Mi
kvc_assert_ok "pool $b on it" managed_pool $b $b 512Mi
ns_a=$(kvc_real_nodes_namespace probe-a)
ns_b=$(kvc_real_nodes_namespace probe-b)
ns_c=$(kvc_real_nodes_namespace probe-c)
pool_binding "$ns_a" $b shared 128Mi probe-a
pool_binding "$ns_b" $b shared 128Mi probe-b
pool_binding "$ns_c" $b shared 64Mi probe-c
for n in "$ns_a" "$ns_b" "$ns_c"; do
  kvc_wait_for 240 "$n/shared granted" binding_granted "$n" shared
done

t0=$SECONDS
probe "$ns_a" shared --replicas 2 --keep-blocks
kvc_log "two vLLM probes in $((SECONDS - t0)) s: $(jq -c '[.probes[] | {replica, node, stage, blocksWritten, blocksRead, hitRatio, sharedPrefix, put: .put.p50Ms, get: .get.p50Ms}]' <<<"$report")"
kvc_assert_eq "two vLLM probes on one Binding: exit 0" 0 "$probe_rc"
kvc_assert_eq "the first found no shared-prefix block and wrote its blocks" "0 true" \
  "$(jq -r '.probes[0] | "\(.sharedPrefix.read) \(.blocksWritten > 0)"' <<<"$report")"
kvc_assert_eq "the second read >= 90 % of the shared-prefix blocks the first wrote" true \
  "$(jq -r '.probes[1] | .sharedPrefix.read >= 0.9 * .sharedPrefix.blocks' <<<"$report")"
kvc_assert_eq "every block read back intact, on the file vehicle, tenant probe-a" "0 0 file/probe-a" \
  "$(jq -r '"\(.probes[0].corruptBlocks) \(.probes[1].corruptBlocks) \(.probes[1].vehicle)/\(.probes[1].tenant)"' <<<"$report")"
kvc_assert_eq "the second's hit ratio is the engine's (hit tokens / queried tokens)" true \
  "$(jq -r '.probes[1] | .hitRatio == ((.hitTokens / .queryTokens * 10000 | round) / 10000)' <<<"$report")"
# The engines (and the probe) write in batches: the backend's PoolWrites counts those writes too.
kvc_wait_for 45 "the backend sees the batch writes: PoolWrites=True/WriteObserved" \
  kvcb_condition_is $b PoolWrites True/WriteObserved

probe "$ns_b" shared
kvc_assert_eq "a probe on another Binding (tenant probe-b), same seed: exit 0, none of the prefix blocks" \
  "0 0 probe-b" "$probe_rc $(jq -r '"\(.probes[0].sharedPrefix.read) \(.probes[0].tenant)"' <<<"$report")"

tenant_bytes() {
  admin_curl $b "/api/v1/tenant_quotas?tenant_id=$1" 2>/dev/null |
    jq -r '.data.used_bytes // .data.charged_bytes // "absent"'
}
kvc_log "tenant probe-a holds $(tenant_bytes probe-a) bytes of the kept blocks"
probe "$ns_a" shared --replicas 2
kvc_log "again on $ns_a: $(jq -c '{probe: .probes[0] | {sharedPrefix, blocksRead}, cleanup}' <<<"$report")"
kvc_assert_eq "the same seed and replicas on the first Binding again: every block kept is found (across runs)" \
  "0 8 0 0" "$probe_rc $(jq -r '"\(.probes[0].sharedPrefix.read) \(.probes[0].blocksWritten) \(.probes[1].blocksWritten)"' <<<"$report")"
kvc_assert_eq "its cleanup removed all 40 blocks of the seed (8 + 8 x 2 + 8 x 2)" "true 40" \
  "$(jq -r '"\(.cleanup.ok) \(.cleanup.removedObjects)"' <<<"$report")"
kvc_wait_for 30 "the tenant holds nothing afterwards" bash -c "[ \"\$(admin_curl $b '/api/v1/tenant_quotas?tenant_id=probe-a' | jq -r '.data.used_bytes // .data.charged_bytes')\" = 0 ]"

probe "$ns_a" shared --replicas 2 --engine SGLang
kvc_log "two SGLang probes: $(jq -c '[.probes[] | {replica, stage, blocksWritten, blocksRead, sharedPrefix, vehicle}]' <<<"$report")"
kvc_assert_eq "two SGLang probes (the environment vehicle): exit 0, the second read the first's prefix" \
  "0 environment 0 8 true" \
  "$probe_rc $(jq -r '"\(.probes[0].vehicle) \(.probes[0].sharedPrefix.read) \(.probes[1].sharedPrefix.read) \(.cleanup.ok)"' <<<"$report")"

# No Pod of the namespace may send anywhere but to DNS.
kubectl -n "$ns_b" apply -f - >/dev/null <<'YAML'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: egress-dns-only}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
  - ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
YAML
probe "$ns_b" shared --deadline 30
message=$(jq -r '.probes[0].failure.message // ""' <<<"$report")
kvc_log "egress denied: $message"
kvc_assert_eq "a probe that cannot reach the master: exit 3, failed at connect" "3 connect" \
  "$probe_rc $(jq -r '.probes[0].stage' <<<"$report")"
kvc_assert_contains "its message names the master and what to check" \
  "$b-leader.$KVC_SYSTEM_NAMESPACE.svc:50051 is unreachable from the Pod" "$message"
kubectl -n "$ns_b" delete networkpolicy egress-dns-only >/dev/null

# The tenant of $ns_c holds nothing, so its ledger entry can be deleted; the operator registers it
# again at its next pass (30 s at most): probe at once, and once more if it was faster.
for attempt in 1 2 3; do
  admin_curl $b "/api/v1/tenant_quotas?tenant_id=probe-c" -X DELETE -o /dev/null
  probe "$ns_c" shared
  [ "$probe_rc" = 3 ] && break
  kvc_log "attempt $attempt: the tenant was registered again before the probe wrote"
done
message=$(jq -r '.probes[0].failure.message // ""' <<<"$report")
kvc_log "tenant deleted: $message"
kvc_assert_eq "a probe whose tenant the master does not know: exit 3, write refused -1701" \
  "3 write -1701 TENANT_NOT_REGISTERED" \
  "$probe_rc $(jq -r '.probes[0] | "\(.stage) \(.failure.code) \(.failure.codeName)"' <<<"$report")"
kvc_assert_contains "its message names the tenant and the check" \
  "tenant probe-c is not registered in its ledger (TENANT_NOT_REGISTERED). Check the Binding's QuotaGranted" "$message"
kvc_wait_for 60 "the operator registered it again: a probe uses the store" \
  bash -c "'$kvcache' probe -n $ns_c --binding shared --kubeconfig '$KUBECONFIG' --node-selector type=real -o json 2>/dev/null | jq -e .ok"

kvc_assert_eq "no probe Pod is left behind" "" \
  "$(kubectl get pods -A -l app.kubernetes.io/name=kvcache-probe -o name 2>/dev/null)"

plugins=$(mktemp -d)
ln -s "$(readlink -f "$kvcache")" "$plugins/kubectl-kvcache"
kvc_log "$("$kvcache" status --kubeconfig "$KUBECONFIG" 2>&1)"
kvc_wait_for 60 "kvcache status: the backend reports no condition False" bash -c \
  "'$kvcache' status -o json --kubeconfig '$KUBECONFIG' | jq -e '.backends[] | select(.name == \"$b\") | [.conditions[] | select(.status == \"False\")] == []'"
tree=$(PATH=$plugins:$PATH kubectl kvcache status -o json)
kvc_assert_eq "kubectl kvcache status: backend $b -> pool $b -> the three Bindings, each granted" \
  "$ns_a/shared:128Mi $ns_b/shared:128Mi $ns_c/shared:64Mi" \
  "$(jq -r --arg b $b '.backends[] | select(.name == $b) | .pools[] | select(.name == $b) | [.bindings[] | "\(.name):\(.effectiveQuota)"] | join(" ")' <<<"$tree")"
text=$("$kvcache" status --kubeconfig "$KUBECONFIG")
kvc_assert_contains "the text tree nests the Binding under its pool" "  POOL $b  Ready" "$text"
rm -rf "$plugins"
kvc_assert_ok "kvcache diagnose names nothing on them" bash -c \
  "diagnose_clear KVCacheBackend $b && diagnose_clear KVCachePool $b && diagnose_clear KVCachePoolBinding $ns_a/shared"

leader_pod=$(store_pods $b leader | head -1)
kvc_assert_ok "the master paused (SIGSTOP)" signal_store_process "$leader_pod" mooncake_master STOP
t0=$SECONDS
probe "$ns_a" shared --deadline 10
elapsed=$((SECONDS - t0))
signal_store_process "$leader_pod" mooncake_master CONT
kvc_log "paused master: $(jq -c '.probes[0] | {stage, seconds, failure}' <<<"$report") in $elapsed s"
kvc_assert_eq "a probe against a paused master: exit 3, stalled" "3 stalled" \
  "$probe_rc $(jq -r '.probes[0].stage' <<<"$report")"
kvc_assert_eq "bounded by its deadline (10 s) and the Pod's start" true "$([ $elapsed -lt 60 ] && echo true)"

kvc_log "after the pause: $("$kvcache" diagnose --kubeconfig "$KUBECONFIG" 2>&1 | tr '\n' ' ')"
kvc_assert_eq "and no probe Pod of it is left behind" "" \
  "$(kubectl get pods -A -l app.kubernetes.io/name=kvcache-probe -o name 2>/dev/null)"

for n in "$ns_a" "$ns_b" "$ns_c"; do
  kubectl -n "$n" delete kvcpb shared --wait=false >/dev/null
done
for n in "$ns_a" "$ns_b" "$ns_c"; do
  kvc_wait_for 60 "$n/shared is released (nothing of the probes holds it)" \
    bash -c "! kubectl -n $n get kvcpb shared >/dev/null 2>&1"
done
kvc_done
