#!/usr/bin/env bash
# The admission webhook under hostile callers (docs/webhook.md#hostile-callers), on the real
# nodes, against the operator installed in-cluster: an unprivileged Pod on a real node runs
# bench/webhook/hostile_client.py against the webhook Service — reviews nested 100,000 deep,
# near-limit bodies sent but for their last byte and held open, and a flood of connections that
# send nothing — while a labelled vLLM Pod is created every second for 60 s. Then:
#   - at least 99 % of the creates succeed, every one injected;
#   - no operator replica restarted, the Lease gpustack-system/kvcache-operator kept its holder;
#   - each replica's peak RSS (VmHWM of the process, read on the host: the real nodes' containers
#     are host processes) stays under the bound docs/webhook.md states;
#   - the attack was refused as documented: the deep reviews answered 400, the replicas' refusal
#     counters moved (json_depth, and idle_evicted or handshake_timeout, body_budget or
#     request_timeout).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
root=$(cd "$(dirname "$0")/../../.." && pwd)
b=mooncake-dram
sys=$KVC_SYSTEM_NAMESPACE
# docs/webhook.md: what the webhook server may add to a replica's RSS under any attack.
bound_delta_mib=${KVC_HOSTILE_RSS_DELTA_MIB:-84}
creates=${KVC_HOSTILE_CREATES:-60}
walkthrough_namespace team-a || { echo "FAIL: namespace team-a"; exit 1; }
trap 'delete_walkthrough kvcache-test.gpustack.ai/hostile=true; kvc_cleanup' EXIT

# operator_pids: "POD PID" of each replica's operator process, found on the host by its
# environment (POD_NAME, set from the Pod's name) and its command line.
operator_pids() {
  local pod pid
  for pod in $(kubectl -n $sys get pods -l app.kubernetes.io/name=kvcache-operator -o jsonpath='{.items[*].metadata.name}'); do
    for pid in /proc/[0-9]*; do
      tr '\0' '\n' 2>/dev/null <"$pid/environ" | grep -qx "POD_NAME=$pod" || continue
      tr '\0' ' ' 2>/dev/null <"$pid/cmdline" | grep -q ' operator ' || continue
      echo "$pod ${pid#/proc/}"
    done
  done
}
status_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status" 2>/dev/null; }
restarts() {
  kubectl -n $sys get pods -l app.kubernetes.io/name=kvcache-operator \
    -o jsonpath='{range .items[*]}{.metadata.name}={.status.containerStatuses[0].restartCount} {end}'
}
holder() { kubectl -n $sys get lease kvcache-operator -o jsonpath='{.spec.holderIdentity}'; }
# refusals REASON: the sum over the replicas of kvcache_webhook_refusals_total{reason=REASON}.
refusals() {
  local ip total=0 n
  for ip in $(kubectl -n $sys get pods -l app.kubernetes.io/name=kvcache-operator -o jsonpath='{.items[*].status.podIP}'); do
    n=$(curl -sk --max-time 5 "https://$ip:9443/metrics" |
      awk -v r="kvcache_webhook_refusals_total{reason=\"$1\"}" '$1 == r {print $2}')
    total=$((total + ${n:-0}))
  done
  echo $total
}

# Step 1's backend, Step 2's pool and Binding (as pools.sh): what the labelled Pods name.
kvc_assert_ok "Step 1's backend is created" walkthrough_backend 512Mi
kvc_wait_for 240 "it is Ready" kvcb_phase_is $b Ready
kvc_assert_ok "Step 2's pool and Binding" kubectl apply -f "$root/examples/walkthrough/step2-pool-binding.yaml"
kvc_wait_for 120 "the Binding's quota is granted" bash -c \
  "[ \"\$(kubectl -n team-a get kvcpb team-a -o jsonpath='{.status.conditions[?(@.type==\"QuotaGranted\")].status}')\" = True ]"

# The depth a real Pod reaches, for the docs' 512: every Pod of the cluster, managedFields and all.
kvc_log "deepest JSON of the cluster's Pods: $(kubectl get pods -A -o json | python3 -c '
import json, sys
def depth(v):
    if isinstance(v, dict): return 1 + max(map(depth, v.values()), default=0)
    if isinstance(v, list): return 1 + max(map(depth, v), default=0)
    return 0
print(max(depth(p) for p in json.load(sys.stdin)["items"]))') levels (+2 in a review)"

restarts_before=$(restarts)
holder_before=$(holder)
mapfile -t replicas < <(operator_pids)
kvc_assert_eq "both replicas' processes are found on the host" 2 "${#replicas[@]}"
declare -A rss_before hwm_before
for r in "${replicas[@]}"; do
  rss_before[$r]=$(( $(status_kib "${r#* }" VmRSS) / 1024 ))
  hwm_before[$r]=$(( $(status_kib "${r#* }" VmHWM) / 1024 ))
  kvc_log "replica ${r% *}: pid ${r#* }, RSS ${rss_before[$r]} MiB, peak so far ${hwm_before[$r]} MiB"
done

# The attacker: an unprivileged Pod on a real node, the store image's python3.
ns=$(kvc_real_nodes_namespace hostile)
kubectl -n "$ns" create configmap hostile-client \
  --from-file=hostile_client.py="$root/bench/webhook/hostile_client.py" >/dev/null
attack_seconds=$((creates + 20))
kvc_assert_ok "the attacking Pod is created (non-root, no capabilities)" kubectl -n "$ns" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: attacker}
spec:
  restartPolicy: Never
  nodeSelector: {type: real}
  securityContext: {runAsNonRoot: true, runAsUser: 65534, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: attacker
    image: $(kubectl -n $sys get configmap gpustack-settings -o jsonpath='{.data.kv-cache-backend-image}')
    imagePullPolicy: Never
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    command: [python3, /client/hostile_client.py, --host, kvcache-operator-webhook.$sys.svc,
              --port, "443", --seconds, "$attack_seconds", --deep, "2", --big, "24",
              --idle, "400", --idle-tls, "40"]
    volumeMounts: [{name: client, mountPath: /client}]
  volumes: [{name: client, configMap: {name: hostile-client}}]
YAML
kvc_wait_for 60 "the attacker runs" bash -c \
  "[ \"\$(kubectl -n $ns get pod attacker -o jsonpath='{.status.phase}')\" = Running ]"
sleep 10  # the attack at full strength before the first create

# A labelled Pod every second, each create in the background so that a slow one does not slow
# the pace; the peak RSS of each replica sampled meanwhile.
results=$(mktemp)
samples=$(mktemp)
for i in $(seq 1 "$creates"); do
  ( if kubectl -n team-a apply -f - >/dev/null 2>"$results.err.$i" <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: hostile-$i
  labels: {kvcache.gpustack.ai/inject: "true", kvcache-test.gpustack.ai/hostile: "true"}
  annotations: {kvcache.gpustack.ai/binding: team-a, kvcache.gpustack.ai/engine: vLLM}
spec:
  containers:
  - {name: server, image: "gpustack/runner:cuda13.0-vllm0.29.0", command: [vllm], args: [serve, Qwen/Qwen2.5-7B-Instruct]}
YAML
    then echo ok >>"$results"; else echo "failed: $(cat "$results.err.$i")" >>"$results"; fi ) &
  for r in "${replicas[@]}"; do echo "${r% *} $(status_kib "${r#* }" VmRSS)" >>"$samples"; done
  sleep 1
done
wait
ok=$(grep -c '^ok$' "$results")
kvc_log "creates: $ok of $creates succeeded; failures: $(grep -v '^ok$' "$results" | sort | uniq -c | head -5)"
kvc_assert_eq "at least 99 % of the $creates labelled creates succeed" yes \
  "$([ $((ok * 100)) -ge $((creates * 99)) ] && echo yes || echo "no: $ok")"
injected=$(kubectl -n team-a get pods -l kvcache-test.gpustack.ai/hostile=true \
  -o jsonpath='{range .items[*]}{.metadata.annotations.kvcache\.gpustack\.ai/injected}{"\n"}{end}' | grep -c .)
kvc_assert_eq "every created Pod was injected" "$ok" "$injected"

kvc_wait_for $((attack_seconds + 30)) "the attacker finishes" bash -c \
  "[ \"\$(kubectl -n $ns get pod attacker -o jsonpath='{.status.phase}')\" = Succeeded ]"
summary=$(kubectl -n "$ns" logs attacker | tail -1)
kvc_log "the attack was answered: $summary"
kvc_assert_eq "the deep reviews were answered 400" yes \
  "$(jq -r 'if (."deep:400" // 0) > 0 and (."deep:200" // 0) == 0 then "yes" else "no" end' <<<"$summary")"

kvc_assert_eq "no operator replica restarted" "$restarts_before" "$(restarts)"
kvc_assert_eq "the Lease kept its holder" "$holder_before" "$(holder)"
for r in "${replicas[@]}"; do
  pid=${r#* }
  hwm=$(( $(status_kib "$pid" VmHWM) / 1024 ))
  sampled=$(awk -v p="${r% *}" '$1 == p && $2 > m {m = $2} END {printf "%d", m / 1024}' "$samples")
  cgroup=$(awk -F: '$2 ~ /memory/ {print $3}' "/proc/$pid/cgroup" 2>/dev/null)
  cg_peak=$(cat "/sys/fs/cgroup/memory$cgroup/memory.max_usage_in_bytes" 2>/dev/null ||
    cat "/sys/fs/cgroup$cgroup/memory.peak" 2>/dev/null || echo 0)
  kvc_log "replica ${r% *}: peak RSS $hwm MiB (before the attack ${hwm_before[$r]}; sampled during the creates: $sampled MiB; the container's cgroup peak $((cg_peak / 1048576)) MiB)"
  # The attack's peak: VmHWM when the attack raised it, else the highest sample.
  peak=$([ "$hwm" -gt "${hwm_before[$r]}" ] && echo "$hwm" || echo "$sampled")
  bound=$(( ${rss_before[$r]} + bound_delta_mib ))
  kvc_assert_eq "replica ${r% *}'s peak RSS under attack ($peak MiB) is under the stated bound (${rss_before[$r]} + $bound_delta_mib MiB)" yes \
    "$([ "$peak" -gt 0 ] && [ "$peak" -lt "$bound" ] && echo yes || echo no)"
done
for reason in json_depth idle_evicted handshake_timeout body_budget request_timeout connections peer_connections; do
  counts+="$reason=$(refusals $reason) "
done
kvc_log "the replicas' refusals: $counts"
kvc_assert_eq "the replicas counted the deep reviews (json_depth)" yes \
  "$([[ $counts != *"json_depth=0 "* ]] && echo yes || echo no)"
kvc_assert_eq "and the held bodies (body_budget or request_timeout)" yes \
  "$([[ $counts != *"body_budget=0 "*"request_timeout=0 "* ]] && echo yes || echo no)"
rm -f "$results" "$results".err.* "$samples"
kvc_done
