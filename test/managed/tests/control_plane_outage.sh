#!/usr/bin/env bash
# The control plane goes away under the installed operator (issue: faults with nothing lost, 2.4):
# kube-apiserver SIGKILLed and kept down 30 s, then etcd SIGKILLed and kept down 20 s, while both
# operator replicas run, with a managed store, a pool, two Bindings and an injected Pod live.
#   - test/managed/audit.py samples the API (when it answers) and the ledger every ~250 ms
#     throughout: no finalizer lost, no injection record lost, no granted domain missing from the
#     ledger or the policy ConfigMap, the ledger equal to the model at the end;
#   - afterwards both replicas are Ready again and neither is in CrashLoopBackOff (the one that
#     held the Lease when the API server went away exits once, by design); the operator's Lease has
#     exactly one holder, one of them;
#   - the store's master, fenced while its launcher could not renew its Lease (by design: nothing
#     tells it that no standby took over), serves again with the ledger as it was;
#   - the operator's watches came back (its caches follow the cluster again): a Binding created
#     afterwards is granted, an opted-in Pod created afterwards is injected, and a Binding deleted
#     afterwards is released from the ledger;
#   - before those, a restart of the API server alone (down a few seconds) that both replicas live
#     through: their informers list again on 410 Gone, so a Binding created after it is granted
#     and six opted-in Pods on it are injected (shown to fail with informers watching on from
#     their old resourceVersion).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
here=$(cd "$(dirname "$0")/.." && pwd)
b=outage
recorder=""
cleanup_outage() {
  [ -n "$recorder" ] && kill "$recorder" 2>/dev/null
  # Whatever happens above, the control plane is left running for the suites after this one.
  for _ in $(seq 1 60); do kvc_apiserver_ready && break; sleep 1; done
  if [ -n "${ns:-}" ]; then
    kubectl -n "$ns" delete pods --all --grace-period=0 --force >/dev/null 2>&1
    kubectl -n "$ns" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  fi
  kubectl delete kvcp outage --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'cleanup_outage; kvc_cleanup' EXIT

binding() { pool_binding "$ns" outage "$@"; }
granted() { binding_granted "$ns" "$1"; }
injected() { pod_injected "$ns" "$1"; }
ledger() { admin_curl $b /api/v1/tenant_quotas 2>/dev/null | jq -r '[.data[] | "\(.tenant_id)=\(.requested_quota_bytes)"] | sort | join(" ")'; }
operators() {
  kubectl -n gpustack-system get pods -l app.kubernetes.io/name=kvcache-operator -o json |
    jq -r '.items[] | "\(.metadata.name) ready=\(.status.conditions[]? | select(.type == "Ready") | .status) restarts=\(.status.containerStatuses[0].restartCount) waiting=\(.status.containerStatuses[0].state.waiting.reason // "-")"'
}

kvc_assert_ok "a managed store" managed_backend $b 256Mi
kvc_wait_for 240 "it is Ready" kvcb_phase_is $b Ready
ns=$(kvc_fresh_namespace outage)
kvc_assert_ok "a pool on it" kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: outage}
spec: {backends: [$b], quota: {total: 1Gi}}
YAML
kvc_assert_ok "a Binding before-1" binding before-1 128Mi
kvc_assert_ok "a Binding before-2" binding before-2 64Mi
both_granted() { granted before-1 && granted before-2; }
kvc_wait_for 120 "both are granted" both_granted
kvc_assert_ok "an opted-in Pod" labelled_vllm_pod pod-before before-1 "$ns"
kvc_wait_for 60 "it is injected" injected pod-before
kvc_wait_for 120 "both operator replicas are Ready" bash -c \
  "[ \"\$(kubectl -n gpustack-system get deploy kvcache-operator -o jsonpath='{.status.readyReplicas}')\" = 2 ]"
before=$(operators)
kvc_log "operator replicas before: $(tr '\n' ';' <<<"$before")"
mkdir -p "$KVC_MANAGED_DIR"
record=$KVC_MANAGED_DIR/audit-control_plane_outage.jsonl
: >"$record"
python3 "$here/audit.py" record --backend $b --out "$record" --tls-dir "$(admin_tls_dir)" &
recorder=$!
sleep 3

# --- the faults ----------------------------------------------------------------------------------
# First a restart of the API server (down only while it starts, a few seconds): shorter than the
# operator's renew deadline, so both replicas live through it with their watches broken. The new
# API server's watch cache begins after their resourceVersions (410 Gone): unless their informers
# list again, the processes that survived are blind from here on, their leader granting nothing
# and their webhooks refusing Pods on Bindings they never saw.
kvc_log "kube-apiserver restarted"
kvc_assert_ok "kube-apiserver is killed and started again at once" kvc_component_outage kube-apiserver 0
kvc_wait_for 120 "the API server is ready again" kvc_apiserver_ready
kvc_assert_ok "a Binding created after the restart" binding restart-1 16Mi
kvc_wait_for 60 "is granted" granted restart-1
restart_pods() { for i in 1 2 3 4 5 6; do labelled_vllm_pod pod-restart-$i restart-1 "$ns" || return 1; done; }
injected_all() { for i in 1 2 3 4 5 6; do injected pod-restart-$i || return 1; done; }
kvc_assert_ok "six opted-in Pods on it (both webhook replicas answer some)" restart_pods
kvc_wait_for 60 "are injected" injected_all
restarts() { sed -E 's/^([^ ]+) .*restarts=([0-9]+).*/\1 \2/' <<<"$1" | sort; }
kvc_assert_eq "both replicas lived through the restart (their informers are the ones tested)" \
  "$(restarts "$before")" "$(restarts "$(operators)")"
for i in 1 2 3 4 5 6; do kubectl -n "$ns" delete pod pod-restart-$i --grace-period=0 --force >/dev/null 2>&1; done

kvc_log "kube-apiserver down for 30 s"
kvc_assert_ok "kube-apiserver is killed, kept down 30 s and started again" kvc_component_outage kube-apiserver 30
kvc_wait_for 120 "the API server is ready again" kvc_apiserver_ready
kvc_log "etcd down for 20 s"
kvc_assert_ok "etcd is killed, kept down 20 s and started again" kvc_component_outage etcd 20
kvc_wait_for 120 "the API server is ready again (etcd back)" kvc_apiserver_ready
t_back=$SECONDS

# --- what must hold ------------------------------------------------------------------------------
# (A replica that held the Lease when the API server went away exits and is restarted: it cannot
# know whether another took over, as controller-runtime's managers do. Not a crash loop.)
both_ready() { [ "$(operators | grep -c 'ready=True')" = 2 ]; }
kvc_wait_for 180 "both operator replicas are Ready again" both_ready
after=$(operators)
kvc_log "operator replicas after: $(tr '\n' ';' <<<"$after")"
kvc_assert_eq "neither replica is in CrashLoopBackOff" "" "$(grep CrashLoopBackOff <<<"$after")"
holder=$(kubectl -n gpustack-system get lease kvcache-operator -o jsonpath='{.spec.holderIdentity}')
kvc_assert_contains "the operator's Lease has one holder, one of the replicas ($holder)" "${holder:-none} ready=True" "$after"
kvc_assert_ok "a Binding created afterwards" binding after-1 32Mi
# The store's leader exits at each outage (its 3 s renew deadline: fenced, by design) and the
# kubelet restarts it after its back-off, 10 s, 20 s, then 40 s: the third restart, then the
# members' remount, is most of the wait (the grant came 13-93 s after the API server was back).
kvc_wait_for 180 "is granted" granted after-1
kvc_log "API server back -> new Binding granted: $((SECONDS - t_back))s"
kvc_assert_ok "an opted-in Pod created afterwards" labelled_vllm_pod pod-after after-1 "$ns"
kvc_wait_for 60 "is injected" injected pod-after
kvc_assert_ok "a Binding deleted afterwards (its Pod first)" bash -c \
  "kubectl -n $ns delete pod pod-before --grace-period=0 --force && kubectl -n $ns delete kvcpb before-2 --timeout=90s"
ledger_is() { [ "$(ledger)" = "$1" ]; }
kvc_wait_for 60 "its domain leaves the ledger" ledger_is "after-1=33554432 before-1=134217728 restart-1=16777216"
sleep 2
kill "$recorder"; wait "$recorder" 2>/dev/null; recorder=""
audit=$(python3 "$here/audit.py" check "$record" --converge-within 20 --final 2>&1)
kvc_log "$audit"
kvc_assert_contains "the audit finds no violation in any sample (the outages included)" "0 violation(s)" "$audit"
kvc_done
