#!/usr/bin/env bash
# A Binding's hit rate and its silent-zero alarm on the real path (issue 26 §2, §3): the installed
# operator reads the counters of the engine Pods the webhook injected for a Binding, on the real
# nodes, through the Pod network.
#   - `kvcache probe --serve-metrics` Pods (the engines' counters under their names, on vLLM's
#     port 8000, after a run against the managed store): the Binding's status.hitRate is the first
#     probe's ratio while it serves (its later prompts read its first's prefix) and the second's
#     while it serves (it read the first's prefix too), the pool's domains[].hitRate the same,
#     CacheUsed=True; once the probes are gone, hitRate is absent again (absent is not zero) and
#     CacheUsed Unknown/NoEnginePods;
#   - an injected Pod that never touches the store (python3 sleeping, no /metrics), on another
#     Binding, with kv-cache-unused-after at 20s: CacheUsed Unknown/AwaitingUse, then
#     False/NothingCached naming the Pod, a KVCacheUnused Warning Event on the Pod naming the
#     walkthrough's check, `kvcache diagnose` naming the symptom; no hitRate;
#   - the leading operator's /metrics, scraped from the monitoring namespace: the Binding's grant,
#     usage (0, present) and CacheUsed as gauges, no hit ratio series, the backend's capacity;
#   - kv-cache-engine-metrics "false": nothing is read (the Pod's reading says so), restored after.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
kvcache=${KVC_KVCACHE_BIN:?the kvcache binary (ctest sets KVC_KVCACHE_BIN)}
b=hitrate-store
sys=gpustack-system
cleanup_hit_rate() {
  kubectl -n $sys patch configmap gpustack-settings --type=json \
    -p '[{"op":"remove","path":"/data/kv-cache-unused-after"}]' >/dev/null 2>&1
  kubectl -n $sys patch configmap gpustack-settings --type=json \
    -p '[{"op":"remove","path":"/data/kv-cache-engine-metrics"}]' >/dev/null 2>&1
  [ -n "${probe_pid:-}" ] && kill "$probe_pid" 2>/dev/null
  delete_bindings_of "${ns_a:-}" "${ns_b:-}"
  kubectl delete kvcp $b --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'cleanup_hit_rate; kvc_cleanup' EXIT

binding_field() { kubectl -n "$1" get kvcpb "$2" -o jsonpath="$3" 2>/dev/null; }
cache_used() { object_condition kvcpb "$2" CacheUsed "$1"; }
cache_used_is() { [ "$(cache_used "$1" "$2")" = "$3" ]; }
export -f object_condition cache_used cache_used_is

kvc_assert_ok "backend $b" managed_backend $b 256Mi
kvc_assert_ok "pool $b on it" managed_pool $b $b 512Mi
ns_a=$(kvc_real_nodes_namespace hitrate-a)
ns_b=$(kvc_real_nodes_namespace hitrate-b)
pool_binding "$ns_a" $b shared 128Mi hitrate-a
pool_binding "$ns_b" $b idle 64Mi hitrate-b
for n in "$ns_a/shared" "$ns_b/idle"; do
  kvc_wait_for 240 "$n granted" binding_granted "${n%/*}" "${n#*/}"
done
kvc_wait_for 60 "no engine Pod yet: CacheUsed Unknown/NoEnginePods, no hitRate" \
  bash -c "[ \"\$(kubectl -n $ns_a get kvcpb shared -o json | jq -r '[(.status.conditions[] | select(.type==\"CacheUsed\") | \"\(.status)/\(.reason)\"), (.status.hitRate // \"absent\")] | join(\" \")')\" = 'Unknown/NoEnginePods absent' ]"

# --- the probes serve their counters: the hit rate follows them --------------------------------
seen=$KVC_CLUSTER_DIR/hit-rate-seen.log
: >"$seen"
report_file=$KVC_CLUSTER_DIR/hit-rate-probe.json
t0=$SECONDS
"$kvcache" probe -n "$ns_a" --binding shared --replicas 2 --serve-metrics 75 \
  --kubeconfig "$KUBECONFIG" --node-selector type=real --seed "hitrate-$RANDOM" -o json \
  >"$report_file" 2>>"$KVC_CLUSTER_DIR/probe-progress.log" &
probe_pid=$!
while kill -0 "$probe_pid" 2>/dev/null; do
  printf '%s %s %s %s\n' "$((SECONDS - t0))" \
    "$(binding_field "$ns_a" shared '{.status.hitRate}')" \
    "$(kubectl get kvcp $b -o jsonpath="{.status.domains[?(@.name==\"hitrate-a\")].hitRate}" 2>/dev/null)" \
    "$(cache_used "$ns_a" shared)" >>"$seen"
  sleep 3
done
probe_rc=0
wait "$probe_pid" || probe_rc=$?
probe_pid=
kvc_log "probe (2 replicas serving 75 s each) in $((SECONDS - t0)) s: $(jq -c '[.probes[] | {replica, stage, hitRatio, sharedPrefix}]' "$report_file")"
kvc_log "hitRate seen (s, Binding, pool domain, CacheUsed): $(awk '{print $1"="$2"/"$3"/"$4}' "$seen" | uniq -f0 | tr '\n' ' ')"
kvc_assert_eq "the probes used the store: exit 0" 0 "$probe_rc"
first=$(jq -r '.probes[0].hitRatio' "$report_file")
second=$(jq -r '.probes[1].hitRatio' "$report_file")
kvc_assert_eq "the first probe read its own prompts' prefix, the second the first's too" "true" \
  "$(jq -r '.probes[0].hitRatio > 0 and .probes[1].hitRatio > .probes[0].hitRatio' "$report_file")"
kvc_assert_ok "while the first served, the Binding's hitRate was its hit ratio ($first)" \
  grep -q "^[0-9]* $first " "$seen"
kvc_assert_ok "while the second served, the Binding's hitRate was its hit ratio ($second)" \
  grep -q "^[0-9]* $second " "$seen"
kvc_assert_ok "the pool's domains[].hitRate was the same" grep -q "^[0-9]* $second $second " "$seen"
kvc_assert_ok "CacheUsed was True/TenantHoldsData while the probes served" \
  grep -q "^[0-9]* $second $second True/TenantHoldsData" "$seen"
kvc_wait_for 90 "the probes gone: hitRate absent again, CacheUsed Unknown/NoEnginePods" \
  bash -c "[ -z \"\$(kubectl -n $ns_a get kvcpb shared -o jsonpath='{.status.hitRate}')\" ] && [ \"\$(kubectl -n $ns_a get kvcpb shared -o jsonpath='{.status.conditions[?(@.type==\"CacheUsed\")].reason}')\" = NoEnginePods ]"

# --- an injected Pod that never touches the store: the silent-zero alarm -------------------------
kubectl -n $sys patch configmap gpustack-settings --type=merge \
  -p '{"data":{"kv-cache-unused-after":"20s"}}' >/dev/null
image=$(kubectl -n $sys get configmap gpustack-settings -o jsonpath='{.data.kv-cache-backend-image}')
injected_python_pod "$ns_b" idle-engine idle "$image" 'import time; time.sleep(3600)'
kvc_wait_for 90 "the idle engine Pod injected and Ready" \
  bash -c "[ \"\$(kubectl -n $ns_b get pod idle-engine -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = True ]"
t1=$SECONDS
kvc_wait_for 60 "CacheUsed Unknown/AwaitingUse or already False (its first pass)" \
  bash -c "cache_used_is $ns_b idle Unknown/AwaitingUse || cache_used_is $ns_b idle False/NothingCached"
kvc_wait_for 90 "Ready 20 s with nothing cached: CacheUsed False/NothingCached" cache_used_is "$ns_b" idle False/NothingCached
kvc_log "CacheUsed turned False $((SECONDS - t1)) s after the Pod was Ready (window 20 s, resync 30 s)"
message=$(object_message kvcpb idle CacheUsed "$ns_b")
kvc_assert_contains "its message names the Pod and the probe to run" "Pod/idle-engine" "$message"
kvc_assert_contains "and why the Pod is silent (nothing listens on vLLM's port)" "8000" "$message"
kvc_assert_eq "no hitRate: nothing could be read" "" "$(binding_field "$ns_b" idle '{.status.hitRate}')"
kvc_wait_for 30 "a KVCacheUnused Warning Event on the Pod" bash -c \
  "kubectl -n $ns_b get events.events.k8s.io --field-selector reason=KVCacheUnused,regarding.name=idle-engine -o json | jq -e '.items | length > 0' >/dev/null"
note=$(kubectl -n "$ns_b" get events.events.k8s.io --field-selector reason=KVCacheUnused,regarding.name=idle-engine -o jsonpath='{.items[0].note}')
kvc_assert_contains "its note is the walkthrough's check of the vLLM file vehicle" \
  "vllm.distributed.kv_transfer.kv_connector.v1.mooncake.store.worker" "$note"
kvc_assert_ok "kvcache diagnose names it" diagnose_finds KVCachePoolBinding "$ns_b/idle" "Binding caches nothing" 3

# --- the operator's gauges, read from the monitoring namespace (its NetworkPolicy admits no other)
holder=$(kubectl -n $sys get lease kvcache-operator -o jsonpath='{.spec.holderIdentity}')
operator_ip=$(kubectl -n $sys get pod "$holder" -o jsonpath='{.status.podIP}')
kvc_assert_ok "namespace monitoring" kvc_create_namespace monitoring
kubectl annotate namespace monitoring scheduler.alpha.kubernetes.io/node-selector= >/dev/null
kubectl -n monitoring apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: scrape-operator}
spec:
  restartPolicy: Never
  nodeSelector: {type: real}
  containers:
  - name: scrape
    image: $image
    imagePullPolicy: Never
    command: [python3, -c, "import urllib.request; print(urllib.request.urlopen('http://$operator_ip:8080/metrics', timeout=10).read().decode())"]
YAML
kvc_wait_for 90 "a Pod of the monitoring namespace scraped the leading operator ($holder)" bash -c \
  "[ \"\$(kubectl -n monitoring get pod scrape-operator -o jsonpath='{.status.phase}')\" = Succeeded ]"
scraped=$(kubectl -n monitoring logs scrape-operator)
labels="namespace=\"$ns_b\",binding=\"idle\",pool=\"$b\",domain=\"hitrate-b\""
kvc_assert_contains "the Binding's grant as a gauge (64Mi)" \
  "kvcache_binding_effective_bytes{$labels} 67108864" "$scraped"
kvc_assert_contains "its usage, 0 (read: absent is not zero)" "kvcache_binding_usage_bytes{$labels} 0" "$scraped"
kvc_assert_contains "its CacheUsed as a condition gauge" \
  "kvcache_binding_condition{$labels,type=\"CacheUsed\",status=\"False\",reason=\"NothingCached\"} 1" "$scraped"
kvc_assert_eq "no hit ratio series for it (nothing could be read)" "" \
  "$(grep "^kvcache_binding_hit_ratio{$labels}" <<<"$scraped")"
kvc_assert_contains "the backend's capacity" "kvcache_backend_capacity_bytes{backend=\"$b\"}" "$scraped"
kvc_assert_contains "the reader's own controller metrics" \
  'controller_runtime_reconcile_total{controller="engine-counters"' "$scraped"

# --- the reading turned off --------------------------------------------------------------------
kubectl -n $sys patch configmap gpustack-settings --type=merge \
  -p '{"data":{"kv-cache-engine-metrics":"false"}}' >/dev/null
kvc_wait_for 60 "kv-cache-engine-metrics false: the message says the counters are not read" bash -c \
  "kubectl -n $ns_b get kvcpb idle -o jsonpath='{.status.conditions[?(@.type==\"CacheUsed\")].message}' | grep -q 'not read'"
kvc_done
