#!/usr/bin/env bash
# A real node frozen while it holds the operator's Lease and a webhook replica (issue: faults with
# nothing lost, 2.6). The node's kubelet, containerd and shims are put in a freezer cgroup of
# their own and frozen together with the node's Pods (its kubelet's cgroup root): nothing on it
# runs, nothing reports, its addresses still accept connections. The store is outside the cluster
# (a real master on the bridge address), so the freeze takes only the operator's replica.
#   - opted-in Pods created while it is frozen are either injected (the other replica answered)
#     or refused by the API server's call to the frozen one ("failed calling webhook": the
#     webhook fails closed): none is admitted without its injection;
#   - the other replica takes the Lease within Lease + retry (15 s + 2 s, after its last sight of
#     the frozen one's renewal) and its controllers work: a Binding created then is granted;
#   - after thawing, the frozen replica finds its leadership lost and is restarted, the Lease has
#     exactly one holder, and test/managed/audit.py, sampling every ~250 ms throughout, finds no
#     finalizer, injection record or ledger entry lost.
# A watchdog thaws the node after 150 s whatever becomes of this script.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
root=$(cd "$(dirname "$0")/../../.." && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
b=kvc-freeze
work=$KVC_CLEANUP_FILE.d/freeze
mkdir -p "$work"
freezer=/sys/fs/cgroup/freezer/kvcache-operator
frozen=""
recorder=""
watchdog=""
sampler=""

# node_daemons N: the pids of node N's kubelet, containerd and containerd shims.
node_daemons() {
  cat "$KVC_CLUSTER_DIR/kubelet-$1.pid" "$KVC_CLUSTER_DIR/containerd-$1.pid"
  pgrep -f "containerd-shim-runc-v2 .*-address $KVC_CLUSTER_DIR/node-$1/"
}
# thaw_commands N: the shell commands that thaw node N and put its daemons back (also run by the
# watchdog, detached from this script).
thaw_commands() {
  cat <<SH
echo THAWED >$freezer/frozen-real-node-$1/freezer.state
echo THAWED >$freezer/real-node-$1/freezer.state
for p in \$(cat $freezer/frozen-real-node-$1/cgroup.procs); do echo \$p >/sys/fs/cgroup/freezer/cgroup.procs; done
rmdir $freezer/frozen-real-node-$1
SH
}
freeze() {
  mkdir -p "$freezer/frozen-real-node-$1" || return 1
  frozen=$1
  setsid bash -c "sleep 150; $(thaw_commands "$1")" </dev/null >/dev/null 2>&1 &
  watchdog=$!
  local pid
  for pid in $(node_daemons "$1"); do echo "$pid" >"$freezer/frozen-real-node-$1/cgroup.procs" || return 1; done
  echo FROZEN >"$freezer/frozen-real-node-$1/freezer.state" &&
    echo FROZEN >"$freezer/real-node-$1/freezer.state"
}
thaw() {
  [ -n "$frozen" ] || return 0
  bash -c "$(thaw_commands "$frozen")" 2>/dev/null
  [ -n "$watchdog" ] && kill "$watchdog" 2>/dev/null
  frozen=""
  watchdog=""
}
cleanup_freeze() {
  thaw
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
  [ -n "$recorder" ] && kill "$recorder" 2>/dev/null
  if [ -n "${ns:-}" ]; then
    kubectl -n "$ns" delete pods --all --grace-period=0 --force >/dev/null 2>&1
    kubectl -n "$ns" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  fi
  kubectl delete kvcp freeze --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
  "$root/test/store/store.sh" down "$work/store" >/dev/null 2>&1
}
trap 'cleanup_freeze; kvc_cleanup' EXIT

holder() { kubectl -n gpustack-system get lease kvcache-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
binding() { pool_binding "$ns" freeze "$@"; }
granted() { binding_granted "$ns" "$1"; }
injected() { pod_injected "$ns" "$1"; }
# create NAME: an opted-in Pod NAME; "NAME created" or "NAME refused: <why>" appended to creates.
create() {
  local out
  if out=$(labelled_vllm_pod "$1" before-1 "$ns" 2>&1); then
    echo "$1 created" >>"$work/creates"
  else
    echo "$1 refused: $(tail -1 <<<"$out")" >>"$work/creates"
  fi
}
restarts() { kubectl -n gpustack-system get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}'; }

kvc_assert_ok "a real store outside the cluster (the bridge address)" bash -c \
  "KVC_STORE_HOST=$KVC_HOST_ADDRESS KVC_STORE_MEMBERS=1 '$root/test/store/store.sh' up '$work/store' >'$work/store.log' 2>&1"
# shellcheck disable=SC1091
. "$work/store/env" || exit 1
kvc_assert_ok "an external backend on it" external_backend $b "$KVC_STORE_RPC" "$KVC_STORE_ADMIN"
kvc_assert_ok "a pool" kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: freeze}
spec: {backends: [$b], quota: {total: 256Mi}}
YAML
ns=$(kvc_fresh_namespace freeze)
kvc_assert_ok "a Binding before-1" binding before-1 64Mi
kvc_wait_for 120 "it is granted" granted before-1 || exit 1
kvc_assert_ok "an opted-in Pod" labelled_vllm_pod pod-before before-1 "$ns"
kvc_wait_for 60 "it is injected" injected pod-before
kvc_wait_for 120 "both operator replicas are Ready" bash -c \
  "[ \"\$(kubectl -n gpustack-system get deploy kvcache-operator -o jsonpath='{.status.readyReplicas}')\" = 2 ]"
old=$(holder)
node=$(kubectl -n gpustack-system get pod "$old" -o jsonpath='{.spec.nodeName}')
other=$(kubectl -n gpustack-system get pods -l app.kubernetes.io/name=kvcache-operator -o json |
  jq -r --arg old "$old" '.items[] | select(.metadata.name != $old) | "\(.metadata.name) \(.spec.nodeName)"')
kvc_log "the leader $old runs on $node; the other replica: $other"
kvc_assert_ok "the two replicas run on different real nodes" test -n "$other" -a "${other#* }" != "$node"
n=${node#real-node-}
old_restarts=$(restarts "$old")
mkdir -p "$KVC_MANAGED_DIR"
record=$KVC_MANAGED_DIR/audit-node_freeze.jsonl
: >"$record"
python3 "$here/audit.py" record --backend $b --out "$record" --admin "$KVC_STORE_ADMIN" &
recorder=$!
sleep 2

# --- the fault -----------------------------------------------------------------------------------
freeze "$n"  # not in a kvc_assert_*: those run their command in a subshell, and thaw needs its state
node_state() { cat "$freezer/real-node-$n/freezer.state" "$freezer/frozen-real-node-$n/freezer.state" 2>/dev/null | sort -u | paste -sd' '; }
frozen_now() { [ "$(node_state)" = FROZEN ]; }
kvc_wait_for 10 "$node is frozen: its kubelet, containerd, shims and Pods" frozen_now
t_freeze=$(date +%s.%N)
# The holder, sampled every 0.25 s; opted-in Pods created one after another until it has moved.
(while :; do echo "$(date +%s.%N) $(holder)"; sleep 0.25; done) >"$work/holders" 2>/dev/null &
sampler=$!
moved() { awk -v old="$old" '$2 != "" && $2 != old { found = 1 } END { exit !found }' "$work/holders"; }
i=0
while ! moved && [ "$(echo "$(date +%s.%N) - $t_freeze > 40" | bc)" = 0 ]; do
  i=$((i + 1))
  create "during-$i"
done
kill "$sampler" 2>/dev/null; sampler=""
took=$(awk -v old="$old" -v t0="$t_freeze" '$2 != "" && $2 != old { print $1 - t0; exit }' "$work/holders")
kvc_log "the Lease moved ${took:-not within 40} s after the freeze"
kvc_assert_eq "the other replica took the Lease within Lease + retry + the API's 3 s (20 s)" 1 \
  "$([ -n "$took" ] && echo "$took <= 20" | bc || echo 0)"
# (Its validating webhook may be called on the frozen replica too: refused after 10 s, retried.)
kvc_wait_for 60 "a Binding created while the node is frozen" binding during-1 32Mi
kvc_wait_for 60 "is granted (the controllers work on the other node)" granted during-1
# A few more opted-in Pods, the frozen replica still in the webhook Service.
for j in 1 2 3 4; do create "late-$j"; done
kvc_log "opted-in Pods created while frozen:
$(cat "$work/creates")"
while read -r pod verdict; do
  [ "$verdict" = created ] || continue
  kvc_assert_ok "$pod (created while frozen) carries its injection" injected "$pod"
done <"$work/creates"
kvc_assert_eq "every refusal is the webhook failing closed" "" \
  "$(grep refused "$work/creates" | grep -v 'failed calling webhook')"
kvc_log "frozen for $(echo "$(date +%s.%N) - $t_freeze" | bc) s"
thaw
kvc_assert_eq "$node is thawed" THAWED "$(cat "$freezer/real-node-$n/freezer.state")"

# --- after ---------------------------------------------------------------------------------------
restarted() {
  [ "$(kubectl -n gpustack-system get pod "$old" -o jsonpath='{.status.containerStatuses[0].ready}')/$(restarts "$old")" = "true/$((old_restarts + 1))" ]
}
kvc_wait_for 120 "the thawed replica finds its leadership lost, is restarted and Ready" restarted
kvc_assert_contains "its last instance ended on the lost Lease" "leadership" \
  "$(kubectl -n gpustack-system logs "$old" --previous --tail=5 2>&1)"
kvc_assert_eq "the Lease has exactly one holder, the other replica" "${other% *}" "$(holder)"
kvc_assert_ok "an opted-in Pod created after the thaw" labelled_vllm_pod pod-after before-1 "$ns"
kvc_wait_for 60 "is injected" injected pod-after
sleep 2
kill "$recorder"; wait "$recorder" 2>/dev/null; recorder=""
audit=$(python3 "$here/audit.py" check "$record" --converge-within 20 --final 2>&1)
kvc_log "$audit"
kvc_assert_contains "the audit finds no violation in any sample" "0 violation(s)" "$audit"
kvc_done
