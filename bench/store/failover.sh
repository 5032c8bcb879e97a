#!/usr/bin/env bash
# Failovers timed on the demo (scripts/run.sh leaves it running: Step 4's three leader replicas,
# the walkthrough's three Bindings live), RUNS times each (default 5); prints min/median/max
# tables for docs/performance.md.
#
#   store     the Lease holder of mooncake-dram dies as a crashed node's would: its processes are
#             frozen, its Pod force-deleted, the processes killed (the Lease is never released).
#             Timed from the freeze until a new holder's master serves /health through the leader
#             Service, until both members are mounted on it, and until its ledger holds every
#             domain it held before (the pool controller re-registers them). Between two
#             100 ms samples, how many leader Pods answer /readyz is recorded: never two.
#   operator  the operator's Lease holder is SIGKILLed (its container restarts; the Lease is never
#             released) while labelled Pods are created one after another: timed until a replica
#             leads again (the Lease renewed after the kill: the restarted container, which keeps
#             its identity and so takes its own Lease back at once, or the other replica once the
#             Lease expires), with the Pod creates that failed.
#
# usage: bench/store/failover.sh [RUNS] [store|operator|both]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
demo=${KVC_DEMO_DIR:-${KVC_CACHE_DIR:-$HOME/.cache/kvcache-operator}/demo}
cluster=${KVC_CLUSTER_DIR:-$demo/cluster}
# shellcheck disable=SC1091
. "$cluster/env"
runs=${1:-5}
which=${2:-both}
b=mooncake-dram
sys=gpustack-system
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
holder() { kubectl -n "$sys" get lease "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }

# The operator's client certificate, to read the master as the operator does.
for key in tls.crt tls.key ca.crt; do
  kubectl -n "$sys" get secret kvcache-store-operator-client -o json |
    jq -r --arg k "$key" '.data[$k] | @base64d' >"$work/$key"
done
admin() {
  local ip
  ip=$(kubectl -n "$sys" get service "$b-leader" -o jsonpath='{.spec.clusterIP}')
  curl -sf --max-time 1 --cacert "$work/ca.crt" --cert "$work/tls.crt" --key "$work/tls.key" \
    --connect-to "$b-leader.$sys.svc:9003:$ip:9003" "https://$b-leader.$sys.svc:9003$1"
}
serves() { admin /health 2>/dev/null | grep -q '"service_ready": *true'; }
segments() { admin /get_segments_detail 2>/dev/null | jq '.segments | length' 2>/dev/null || echo -; }
domains() { admin /api/v1/tenant_quotas 2>/dev/null | jq -r '[.data[].tenant_id] | sort | join(",")' 2>/dev/null; }

# signal_pod POD SIGNAL: every process of the Pod, from the host (the real nodes run here).
signal_pod() {
  local pid hits=0
  for pid in /proc/[0-9]*; do
    if { tr '\0' '\n' <"$pid/environ" | grep -qx -e "KUBERNETES_POD_NAME=$1" -e "HOSTNAME=$1" ||
         tr '\0' '\n' <"$pid/cmdline" | grep -qx -e "--identity=$1"; } 2>/dev/null; then
      kill "-$2" "${pid#/proc/}" 2>/dev/null && hits=$((hits + 1))
    fi
  done
  [ "$hits" -gt 0 ]
}

# ready_leaders: how many leader Pods' launchers answer /readyz 200 (their master serves), by
# their Pod IPs (the bench runs on the host, inside the cluster's network).
ready_leaders() {
  local n=0 ip
  for ip in $(kubectl -n "$sys" get pods -l "app.kubernetes.io/instance=$b,app.kubernetes.io/component=leader" \
                -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}'); do
    curl -sf --max-time 0.3 "http://$ip:9004/readyz" >/dev/null 2>&1 && n=$((n + 1))
  done
  echo "$n"
}

stats() {  # stdin: one figure a line -> "min / median / max"
  sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.1f / %.1f / %.1f s\n", v[1], m, v[NR] }'
}

store_failover() {
  local expected old t0 serving mounted ledger most=0 n
  # The steady state: 3 replicas, 1 ready (the holder), both members mounted.
  for _ in $(seq 180); do
    [ "$(kubectl -n "$sys" get deploy "$b-leader" -o jsonpath='{.status.replicas}/{.status.readyReplicas}')" = 3/1 ] &&
      [ "$(segments)" = 2 ] && break
    sleep 1
  done
  expected=$(domains)
  old=$(holder "$b-leader")
  t0=$(now)
  signal_pod "$old" STOP
  kubectl -n "$sys" delete pod "$old" --grace-period=0 --force >/dev/null 2>&1
  signal_pod "$old" KILL
  serving="" mounted="" ledger=""
  while [ -z "$ledger" ] || [ -z "$mounted" ]; do
    n=$(ready_leaders); [ "$n" -gt "$most" ] && most=$n
    if [ -z "$serving" ] && serves && [ "$(holder "$b-leader")" != "$old" ]; then serving=$(since "$t0"); fi
    [ -n "$serving" ] && [ -z "$mounted" ] && [ "$(segments)" = 2 ] && mounted=$(since "$t0")
    [ -n "$serving" ] && [ -z "$ledger" ] && [ "$(domains)" = "$expected" ] && ledger=$(since "$t0")
    [ "$(since "$t0" | cut -d. -f1)" -gt 120 ] && break
    sleep 0.1
  done
  echo "${serving:-999} ${mounted:-999} ${ledger:-999} $most" >>"$work/store"
  echo "store run: serving ${serving:-never} s, members mounted ${mounted:-never} s, ledger back ${ledger:-never} s ($expected); most ready leaders in a sample: $most" >&2
}

# pod_create: one opted-in vLLM Pod in team-a (Binding team-a), created server-side as a dry run
# (the webhook is called all the same: it declares no side effects); 0 when admitted and injected.
pod_create() {
  kubectl -n team-a create --dry-run=server -o json -f - 2>/dev/null <<YAML | grep -q MOONCAKE_CONFIG_PATH
apiVersion: v1
kind: Pod
metadata:
  name: bench-failover-$RANDOM
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: team-a, kvcache.gpustack.ai/engine: vLLM}
spec:
  containers:
  - name: server
    image: gpustack/runner:cuda13.0-vllm0.29.0
    command: [vllm]
    args: [serve, Qwen/Qwen2.5-7B-Instruct]
YAML
}

# renewed_after T: the operator's Lease was renewed after T (seconds since the epoch).
renewed_after() {
  local renew
  renew=$(kubectl -n "$sys" get lease kvcache-operator -o jsonpath='{.spec.renewTime}' 2>/dev/null)
  [ -n "$renew" ] && awk -v r="$(date -d "$renew" +%s.%N)" -v t="$1" 'BEGIN { exit !(r > t) }'
}

operator_failover() {
  local old t0 acquired="" failed=0 created=0 by
  kubectl -n "$sys" rollout status deploy kvcache-operator --timeout=180s >/dev/null 2>&1
  old=$(holder kvcache-operator)
  t0=$(now)
  signal_pod "$old" KILL
  # Until 3 s after a replica leads again.
  while [ -z "$acquired" ] || awk -v a="$acquired" -v s="$(since "$t0")" 'BEGIN { exit !(s < a + 3) }'; do
    if pod_create; then created=$((created + 1)); else failed=$((failed + 1)); fi
    if [ -z "$acquired" ] && renewed_after "$t0"; then
      acquired=$(since "$t0")
      by=$(holder kvcache-operator)
    fi
    [ "$(since "$t0" | cut -d. -f1)" -gt 120 ] && break
  done
  echo "${acquired:-999} $failed $created" >>"$work/operator"
  echo "operator run: a replica leads again after ${acquired:-never} s ($([ "$by" = "$old" ] && echo "the killed one, restarted" || echo "the other one")); Pod creates failed $failed of $((failed + created))" >&2
}

for _ in $(seq "$runs"); do
  case $which in store|both) store_failover ;; esac
  case $which in operator|both) operator_failover ;; esac
done
if [ -s "$work/store" ]; then
  echo "| store failover ($runs runs, min / median / max) | |"
  echo "|---|---|"
  echo "| a new master serves through the leader Service | $(cut -d' ' -f1 "$work/store" | stats) |"
  echo "| both members re-mounted | $(cut -d' ' -f2 "$work/store" | stats) |"
  echo "| the ledger holds every domain again | $(cut -d' ' -f3 "$work/store" | stats) |"
  echo "| most leaders ready in one 100 ms sample | $(cut -d' ' -f4 "$work/store" | sort -n | tail -n 1) |"
fi
if [ -s "$work/operator" ]; then
  echo "| operator failover ($runs runs) | |"
  echo "|---|---|"
  echo "| a replica leads again | $(cut -d' ' -f1 "$work/operator" | stats) |"
  echo "| Pod creates failed / made | $(awk '{ f += $2; c += $2 + $3 } END { print f " / " c }' "$work/operator") |"
fi
