#!/usr/bin/env bash
# The monitoring kit against a real Prometheus (3.16, built from its Go module) in the local
# cluster, on a real node, in the monitoring namespace the install's NetworkPolicies admit:
#   - the kit (deploy/monitoring, as its kustomize Component renders it) is stored by the API
#     server under the Prometheus Operator's own CRDs (their schemas validate it; a misspelt field
#     is refused);
#   - Prometheus runs with the configuration the Prometheus Operator generates from those stored
#     objects (test/monitoring/prometheus_config.py: the operator itself is not built here) and
#     scrapes, through the Pod network: both operator replicas (ServiceMonitor), the managed store's
#     serving leader (not its standby) over mutual TLS with the scraper's certificate (PodMonitor
#     kvcache-store), and two engine Pods the webhook injected for a Binding, using the store with
#     what was injected and counting their lookups under vLLM's counter names (PodMonitor
#     kvcache-engines, labelled with the Binding of their injection record): every target up;
#   - every rule of the PrometheusRule evaluates (health ok, no error), the Binding's engine hit
#     ratio is recorded, KVCacheSilentZero fires for an injected Pod that never touches the store,
#     and every query of the Grafana dashboard returns series.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/test/managed/lib.sh"
. "$root/test/cluster/paths.sh"
. "$here/prometheus.sh"
kvc_init
kvc_require_real_nodes
kvcache=${KVC_KVCACHE_BIN:?the kvcache binary (ctest sets KVC_KVCACHE_BIN)}
[ -s "$KVC_PROMETHEUS_CRDS/monitoring.coreos.com_podmonitors.yaml" ] ||
  { echo "FAIL: the Prometheus Operator's CRDs are not fetched ($KVC_PROMETHEUS_CRDS): test/cluster/build.sh prometheus"; exit 1; }
b=monitoring-store
sys=gpustack-system
mon=$KVC_KIT_NAMESPACE
work=$(mktemp -d)
cleanup_kit() {
  kubectl -n $sys patch configmap gpustack-settings --type=json \
    -p '[{"op":"remove","path":"/data/kv-cache-unused-after"}]' >/dev/null 2>&1
  kubectl delete -f "$work/kit.yaml" --ignore-not-found --wait=false >/dev/null 2>&1
  prometheus_down
  delete_bindings_of "${ns_a:-}" "${ns_b:-}"
  kubectl delete kvcp $b --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
  rm -rf "$work"
}
trap 'cleanup_kit; kvc_cleanup' EXIT

# --- the kit, stored under the Prometheus Operator's CRDs ----------------------------------------
kvc_assert_ok "the Prometheus Operator's CRDs (ServiceMonitor, PodMonitor, PrometheusRule) installed" kit_crds
kit_render "$work" || exit 1
kvc_assert_eq "the kit renders 7 objects" 7 "$(grep -c '^kind:' "$work/kit.yaml")"
kvc_assert_ok "the kit validates against them and is stored (apply --validate=strict)" \
  kubectl apply --server-side --validate=strict -f "$work/kit.yaml"
sed 's/podMetricsEndpoints:/podMetricEndpoints:/' "$work/kit.yaml" >"$work/misspelt.yaml"
kvc_assert_refused "a misspelt field is refused, so the schemas are really applied" \
  "podMetricEndpoints" kubectl apply --server-side --dry-run=server --validate=strict -f "$work/misspelt.yaml"

# --- a store, a Binding with engines serving their counters, one that caches nothing --------------
kvc_assert_ok "backend $b, its leader with a standby (replicas 2)" managed_backend $b 256Mi '{replicas: 2}'
kvc_assert_ok "pool $b on it" managed_pool $b $b 512Mi
ns_a=$(kvc_real_nodes_namespace kit-a)
ns_b=$(kvc_real_nodes_namespace kit-b)
pool_binding "$ns_a" $b chat 128Mi kit-a-chat
pool_binding "$ns_b" $b idle 64Mi kit-b-idle
for n in "$ns_a/chat" "$ns_b/idle"; do
  kvc_wait_for 240 "$n granted" binding_granted "${n%/*}" "${n#*/}"
done
kubectl -n $sys patch configmap gpustack-settings --type=merge \
  -p '{"data":{"kv-cache-unused-after":"20s"}}' >/dev/null
image=$(kubectl -n $sys get configmap gpustack-settings -o jsonpath='{.data.kv-cache-backend-image}')
injected_python_pod "$ns_b" idle-engine idle "$image" 'import time; time.sleep(3600)'
# A refusal, so that the refusal panels have a series: a Pod naming a Binding that does not exist.
kubectl -n "$ns_b" apply -f - >/dev/null 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: refused
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: nowhere, kvcache.gpustack.ai/engine: vLLM}
spec:
  containers: [{name: server, image: $image, command: [vllm, serve, m]}]
YAML

# --- Prometheus, configured as the Prometheus Operator configures it from the stored objects ------
image_ref=$(prometheus_image) || { kvc_log "the Prometheus image could not be built or imported"; exit 1; }
# Another test's monitoring namespace may still be going away: wait for it, bounded.
kvc_wait_for 180 "no namespace $mon left by another test" \
  bash -c "! kubectl get namespace $mon >/dev/null 2>&1"
kvc_assert_ok "namespace $mon" kvc_create_namespace $mon
kubectl annotate namespace $mon scheduler.alpha.kubernetes.io/node-selector= >/dev/null
prometheus_config "$work" || exit 1
kvc_assert_ok "promtool checks the generated configuration's rule files" \
  "$KVC_PROMETHEUS_BIN/promtool" check rules "$work"/rules/*.yaml
kvc_assert_ok "Prometheus started" prometheus_up "$work" "$image_ref"
kvc_wait_for 120 "Prometheus ready on a real node" prometheus_ready
kvc_log "Prometheus: $image_ref ($(prom /api/v1/status/buildinfo | jq -r '.data.goVersion'))"

# The engines: two Pods the webhook injects for the Binding that use the store and count their
# lookups as vLLM does (steady_engines, prometheus.sh).
steady_engines "$ns_a" chat "$image"

# --- every target up --------------------------------------------------------------------------
# targets_up JOB N: at least N active targets of JOB, all up.
targets_up() {
  prom /api/v1/targets | jq -e --arg job "$1" --argjson n "$2" \
    '[.data.activeTargets[] | select(.labels.job == $job)] | length >= $n and all(.health == "up")' >/dev/null
}
export -f targets_up
kvc_wait_for 150 "the operator's replicas scraped (ServiceMonitor: both up, through its NetworkPolicy)" \
  targets_up kvcache-operator-metrics 2
kvc_wait_for 150 "the store's leader scraped over mutual TLS with the scraper's certificate" \
  targets_up $sys/kvcache-store 1
kvc_wait_for 150 "both engine Pods scraped (PodMonitor kvcache-engines)" \
  targets_up $sys/kvcache-engines 2
prom /api/v1/targets >"$work/targets.json"
kvc_log "targets: $(jq -c '[.data.activeTargets[] | {job: .labels.job, health, pod: .labels.pod, binding: .labels.binding}]' "$work/targets.json")"
kvc_assert_eq "every active target is up" "[]" \
  "$(jq -c '[.data.activeTargets[] | select(.health != "up") | {job: .labels.job, pod: .labels.pod, lastError}]' "$work/targets.json")"
kvc_assert_eq "the engine targets carry their Binding, domain and engine from the injection record" \
  "chat kit-a-chat vllm" \
  "$(jq -r '[.data.activeTargets[] | select(.labels.job == "'$sys'/kvcache-engines") | "\(.labels.binding) \(.labels.domain) \(.labels.engine)"] | unique | join(",")' "$work/targets.json")"
kvc_assert_eq "one store target: the serving leader (the standby runs no master, and is not Ready)" 1 \
  "$(jq '[.data.activeTargets[] | select(.labels.job == "'$sys'/kvcache-store")] | length' "$work/targets.json")"
kvc_assert_eq "the store target carries its backend" "$b" \
  "$(jq -r '[.data.activeTargets[] | select(.labels.job == "'$sys'/kvcache-store") | .labels.backend] | unique | join(",")' "$work/targets.json")"

# --- every rule evaluates; the recording rules and an alert have their series -----------------------
kvc_wait_for 120 "the Binding's engine hit ratio recorded (binding:kvcache_engine_hit_ratio:rate5m)" \
  bash -c "[ \"\$(prom_series 'binding:kvcache_engine_hit_ratio:rate5m{binding=\"chat\"}')\" = 1 ]"
kvc_wait_for 120 "the Binding's status.hitRate scraped from the operator (kvcache_binding_hit_ratio)" \
  bash -c "[ \"\$(prom_series 'kvcache_binding_hit_ratio{binding=\"chat\"}')\" = 1 ]"
kvc_wait_for 60 "every rule evaluated, none with an error" rules_ok
kvc_log "rules: $(prom /api/v1/rules | jq -c '[.data.groups[].rules[] | {name, health, state}]')"
# --- every dashboard query returns series ----------------------------------------------------------
kvc_assert_eq "every query of the dashboard returns series" "" "$(dashboard_empty)"
kvc_assert_eq "its namespace variable's query too" "true" \
  "$(prom "/api/v1/label/namespace/values?match[]=kvcache_binding_effective_bytes" | jq -r '.data | length > 0')"
kvc_log "hit ratio recorded for $ns_a/chat: $(prom "/api/v1/query?query=binding:kvcache_engine_hit_ratio:rate5m" | jq -c '[.data.result[] | {binding: .metric.binding, ratio: .value[1]}]')"
kvc_wait_for 150 "KVCacheSilentZero fires for the Binding whose Pod never touches the store" \
  bash -c "prom /api/v1/alerts | jq -e '.data.alerts[] | select(.labels.alertname == \"KVCacheSilentZero\" and .labels.binding == \"idle\" and .state == \"firing\")' >/dev/null"
kvc_assert_eq "and for no other Binding" "idle" \
  "$(prom /api/v1/alerts | jq -r '[.data.alerts[] | select(.labels.alertname == "KVCacheSilentZero") | .labels.binding] | unique | join(",")')"

kubectl -n "$ns_a" delete pod engine-0 engine-1 --timeout=90s >/dev/null
kvc_assert_ok "the engines removed their blocks on SIGTERM: the Binding is released at once" \
  kubectl -n "$ns_a" delete kvcpb chat --timeout=60s
kvc_done
