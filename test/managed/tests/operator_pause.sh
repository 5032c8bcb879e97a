#!/usr/bin/env bash
# The operator's leader paused past its Lease while it writes the ledger, then resumed (issue:
# faults with nothing lost, 2.3). The installed operator (two replicas) with a managed store, a
# pool and twenty Bindings, each its own reuse domain:
#   - all twenty ceilings are raised so that one pass of the leader has all twenty to write (the
#     store's master is held meanwhile); the leader's process is stopped (SIGSTOP, from the host)
#     the instant its log says it registered the first, so it is stopped in the middle of the
#     pass, nineteen writes still to make;
#   - while it is stopped the ceilings are raised twice more (its watch holds both, unread); the
#     other replica takes the Lease (15 s) and writes the last;
#   - then it is resumed: it must send no ledger write (its fence, the last renewal + the renew
#     deadline, passed long ago: docs/operator.md, "Fencing"): no "registered"/"removed" line in
#     its log after the resume; it gives up leading and is restarted; one holder after;
#   - test/managed/audit.py samples the API and the ledger every ~250 ms throughout: the ledger
#     converges on the last ceilings and never diverges again (a stale write from the resumed
#     process would), no finalizer lost.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
here=$(cd "$(dirname "$0")/.." && pwd)
b=op-pause
n=20
work=$KVC_CLEANUP_FILE.d/pause
mkdir -p "$work"
recorder=""
watcher=""
tail_pid=""
stopped=""
master_held=""
cleanup_pause() {
  [ -n "$master_held" ] && signal_store_process "$master_held" mooncake_master CONT
  [ -n "$watcher" ] && kill "$watcher" 2>/dev/null
  [ -n "$tail_pid" ] && kill "$tail_pid" 2>/dev/null
  [ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null
  [ -n "$recorder" ] && kill "$recorder" 2>/dev/null
  [ -n "${ns:-}" ] && kubectl -n "$ns" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  kubectl delete kvcp op-pause --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'cleanup_pause; kvc_cleanup' EXIT

holder() { kubectl -n gpustack-system get lease kvcache-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
# operator_log POD: the kubelet's log file of the replica's running container instance.
operator_log() { ls -t "$KVC_CLUSTER_DIR"/node-*/kubelet/pod-logs/gpustack-system_"$1"_*/operator/*.log 2>/dev/null | head -1; }
restarts() { kubectl -n gpustack-system get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}'; }
one_webhook_endpoint() {
  [ "$(kubectl -n gpustack-system get endpointslices -l kubernetes.io/service-name=kvcache-operator-webhook -o json |
    jq '[.items[].endpoints[]? | select(.conditions.ready == true)] | length')" = 1 ]
}
taken_over() { local h; h=$(holder); [ -n "$h" ] && [ "$h" != "$old" ]; }
# bindings CEILING: the n Bindings d-1..d-n (domains d-1..d-n) at CEILING, in one apply.
bindings() {
  for i in $(seq 1 $n); do
    cat <<YAML
---
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: d-$i, namespace: $ns}
spec:
  poolRef: {name: op-pause}
  quota: {ceiling: $1}
  domain: {name: d-$i, blockSize: 64, dtype: bfloat16}
YAML
  done | kubectl apply -f - >/dev/null
}
# at CEILING-BYTES: how many domains the master's ledger holds at that ceiling.
at() { admin_curl $b /api/v1/tenant_quotas 2>/dev/null | jq --argjson q "$1" '[.data[] | select(.requested_quota_bytes == $q)] | length'; }
all_at() { [ "$(at "$1")" = $n ]; }
all_granted() {
  [ "$(kubectl -n "$ns" get kvcpb -o json | jq '[.items[] | select(any(.status.conditions[]?; .type == "QuotaGranted" and .status == "True"))] | length')" = $n ]
}

kvc_assert_ok "a managed store" managed_backend $b 256Mi
kvc_wait_for 240 "it is Ready" kvcb_phase_is $b Ready || exit 1
ns=$(kvc_fresh_namespace op-pause)
kvc_assert_ok "a pool on it" kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: op-pause}
spec: {backends: [$b], quota: {total: 1Gi}}
YAML
kvc_assert_ok "$n Bindings at 8Mi" bindings 8Mi
kvc_wait_for 120 "all granted" all_granted
kvc_wait_for 60 "the ledger holds them at 8Mi" all_at 8388608
kvc_wait_for 120 "both operator replicas are Ready" bash -c \
  "[ \"\$(kubectl -n gpustack-system get deploy kvcache-operator -o jsonpath='{.status.readyReplicas}')\" = 2 ]"
old=$(holder)
old_pid=$(host_pid "POD_NAME=$old")
old_log=$(operator_log "$old")
old_restarts=$(restarts "$old")
kvc_assert_ok "the leader $old runs here as pid $old_pid, its log at hand" test -n "$old_pid" -a -f "$old_log"
mkdir -p "$KVC_MANAGED_DIR"
record=$KVC_MANAGED_DIR/audit-operator_pause.jsonl
: >"$record"
python3 "$here/audit.py" record --backend $b --out "$record" --tls-dir "$(admin_tls_dir)" &
recorder=$!
sleep 2

# All twenty raises reach the leader's next pass at once: its master is held (SIGSTOP) while they
# are applied, and released once every pass that began before the last of them has met its 5 s
# deadline. That pass then has twenty writes to make; the leader is stopped at the first
# (signalled from its log line), nineteen still to make.
store_leader=$(store_pods $b leader | head -1)
kvc_assert_ok "the store's master is held (SIGSTOP) in $store_leader" signal_store_process "$store_leader" mooncake_master STOP
master_held=$store_leader
kvc_assert_ok "all $n ceilings raised to 16Mi" bindings 16Mi
sleep 6  # a pass that began before the last raise has failed by now: the next sees all twenty
exec {follow}< <(tail -n0 -F "$old_log" 2>/dev/null)
tail_pid=$!
(
  while IFS= read -r line; do
    case $line in
      *'registered, 16777216 bytes'*) kill -STOP "$old_pid" && date +%s.%N >"$work/stopped"; exit ;;
    esac
  done
) <&"$follow" &
watcher=$!
sleep 0.5
kvc_assert_ok "the master is released (SIGCONT)" signal_store_process "$store_leader" mooncake_master CONT
master_held=""
kvc_wait_for 30 "the leader is stopped at its first write of them" test -s "$work/stopped" || exit 1
stopped=$old_pid
kill "$tail_pid" 2>/dev/null; tail_pid=""; watcher=""
exec {follow}<&-
written=$(at 16777216)
kvc_log "stopped with $written of $n domains at 16Mi in the ledger"
kvc_assert_eq "it was stopped with writes of the pass still to make" 1 "$([ "$written" -lt $n ] && echo 1 || echo 0)"
t_stop=$(cat "$work/stopped")
# Its webhook server is stopped too: API writes that call it wait out the webhook's 10 s timeout
# until its failing readiness takes it out of the Service.
kvc_wait_for 30 "the stopped replica leaves the webhook Service's endpoints" one_webhook_endpoint
kvc_wait_for 30 "while it is stopped, all $n raised to 24Mi" bindings 24Mi
kvc_assert_ok "then to 32Mi (its watch holds both raises, unread)" bindings 32Mi
kvc_wait_for 40 "the other replica takes the Lease" taken_over
kvc_wait_for 30 "and writes the 32Mi ceilings" all_at 33554432
kvc_log "Lease taken over and the ledger written $(echo "$(date +%s.%N) - $t_stop" | bc) s after the stop"
resumed_at=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
kvc_assert_ok "the stopped replica is resumed (SIGCONT)" kill -CONT "$old_pid"
stopped=""
gone() { ! kill -0 "$old_pid" 2>/dev/null; }
kvc_wait_for 60 "it gives up leading: its process exits" gone
after=$(awk -v t="$resumed_at" '$1 >= t' "$old_log" | cut -d' ' -f4-)
kvc_log "its log after the resume:
$after"
kvc_assert_contains "it ran after the resume (it found its leadership lost)" "leadership lost" "$after"
kvc_assert_eq "it wrote nothing to the ledger after the resume" "" \
  "$(grep -E 'registered|removed from the ledger' <<<"$after")"
restarted() { [ "$(kubectl -n gpustack-system get pod "$old" -o jsonpath='{.status.containerStatuses[0].ready}')/$(restarts "$old")" = "true/$((old_restarts + 1))" ]; }
kvc_wait_for 90 "its container is restarted once and Ready again" restarted
new=$(holder)
kvc_assert_ok "the Lease has one holder, the other replica ($new)" test -n "$new" -a "$new" != "$old"
sleep 5  # the audit keeps sampling: a late stale write would show as a divergence
kvc_assert_ok "the ledger still holds the 32Mi ceilings" all_at 33554432
kill "$recorder"; wait "$recorder" 2>/dev/null; recorder=""
audit=$(python3 "$here/audit.py" check "$record" --converge-within 30 --final 2>&1)
kvc_log "$audit"
kvc_assert_contains "the audit finds no violation in any sample" "0 violation(s)" "$audit"
kvc_done
