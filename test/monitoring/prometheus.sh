# shellcheck shell=bash
# A real Prometheus beside the monitoring kit on the local cluster, for test/monitoring/kit.sh and
# scripts/run.sh (sourced; needs kubectl on PATH, KUBECONFIG, KVC_CLUSTER_DIR and
# test/cluster/paths.sh). The Prometheus Operator itself is not run here: its CRDs store the kit,
# and Prometheus runs with the configuration the operator would generate from the stored objects
# (prometheus_config.py), in the namespace the install's NetworkPolicies admit.
_kvc_kit_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_kvc_kit_root=$(cd "$_kvc_kit_here/../.." && pwd)
KVC_KIT_NAMESPACE=monitoring

# kit_crds: the Prometheus Operator's CRDs of the kinds the kit uses, installed and Established.
kit_crds() {
  kubectl apply --server-side -f "$KVC_PROMETHEUS_CRDS" >/dev/null || return 1
  local kind i
  for kind in servicemonitors podmonitors prometheusrules; do
    # `kubectl wait` fails outright while a new CRD has no conditions yet: poll instead.
    for i in $(seq 1 61); do
      [ "$(kubectl get crd "$kind.monitoring.coreos.com" \
        -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" = True ] && break
      sleep 1
    done
    [ "$i" -le 60 ] || { echo "CRD $kind.monitoring.coreos.com not Established in 60 s" >&2; return 1; }
  done
}

# kit_render DIR: the kit (the Component of deploy/monitoring alone, as an overlay of nothing;
# kustomize wants its path relative) rendered into DIR/kit.yaml.
kit_render() {
  mkdir -p "$1/component"
  cat >"$1/component/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
components: [$(realpath --relative-to="$1/component" "$_kvc_kit_root/deploy/monitoring")]
YAML
  kubectl kustomize "$1/component" >"$1/kit.yaml"
}

# prometheus_image: the Prometheus image (images/build.sh prometheus, cached by content) imported
# into the real nodes; prints its pinned reference.
prometheus_image() {
  local lines
  lines=$("$_kvc_kit_root/images/build.sh" prometheus) || return 1
  "$_kvc_kit_root/test/cluster/cluster.sh" load "$KVC_CLUSTER_DIR" \
    "$(sed -n 's/^KVC_IMAGE_PROMETHEUS_ARCHIVE=//p' <<<"$lines")" >&2 || return 1
  sed -n 's/^KVC_IMAGE_PROMETHEUS_PINNED=//p' <<<"$lines"
}

# prometheus_config DIR: DIR/prometheus.yml and DIR/rules/ from the monitors and rules the API
# server stores in gpustack-system, as the Prometheus Operator generates them.
prometheus_config() {
  rm -rf "$1/rules" && mkdir -p "$1/rules"  # a rerun's rule files name an older object's uid
  kubectl get servicemonitors,podmonitors -n gpustack-system -o json >"$1/monitors.json" &&
    kubectl get prometheusrules -n gpustack-system -o json >"$1/rules.json" &&
    python3 "$_kvc_kit_here/prometheus_config.py" config "$1/monitors.json" \
      /etc/prometheus/secrets /etc/prometheus/rules >"$1/prometheus.yml" &&
    python3 "$_kvc_kit_here/prometheus_config.py" rules "$1/rules.json" "$1/rules"
}

# prometheus_up DIR IMAGE: Prometheus (IMAGE) as the Pod monitoring/prometheus on a real node,
# with DIR's configuration, the scraper's Secret copied beside it (as the operator copies the
# Secrets a monitor names), and the service discovery's RBAC. The namespace must exist.
prometheus_up() {
  local dir=$1 image=$2 mon=$KVC_KIT_NAMESPACE
  kubectl -n gpustack-system get secret kvcache-store-metrics-client -o json |
    jq '{apiVersion, kind, type, data, metadata: {name: "gpustack-system-kvcache-store-metrics-client"}}' |
    kubectl -n $mon apply -f - >/dev/null || return 1
  kubectl -n $mon create configmap prometheus-config --from-file=prometheus.yml="$dir/prometheus.yml" \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null || return 1
  kubectl -n $mon create configmap prometheus-rules --from-file="$dir/rules" \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null || return 1
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: prometheus, namespace: $mon}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kvcache-kit-prometheus}
rules:
  - apiGroups: [""]
    resources: [pods, services, endpoints, namespaces]
    verbs: [get, list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kvcache-kit-prometheus}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kvcache-kit-prometheus}
subjects: [{kind: ServiceAccount, name: prometheus, namespace: $mon}]
---
apiVersion: v1
kind: Pod
metadata: {name: prometheus, namespace: $mon, labels: {app.kubernetes.io/name: prometheus}}
spec:
  serviceAccountName: prometheus
  nodeSelector: {type: real}
  securityContext: {runAsNonRoot: true, runAsUser: 65534, fsGroup: 65534}
  containers:
  - name: prometheus
    image: $image
    imagePullPolicy: Never
    args: [--config.file=/etc/prometheus/config/prometheus.yml, --storage.tsdb.path=/prometheus,
           --web.listen-address=:9090]
    ports: [{name: web, containerPort: 9090}]
    readinessProbe: {httpGet: {path: /-/ready, port: web}, periodSeconds: 2}
    volumeMounts:
    - {name: config, mountPath: /etc/prometheus/config}
    - {name: rules, mountPath: /etc/prometheus/rules}
    - {name: store-metrics-client, mountPath: /etc/prometheus/secrets/gpustack-system-kvcache-store-metrics-client}
    - {name: data, mountPath: /prometheus}
  volumes:
  - {name: config, configMap: {name: prometheus-config}}
  - {name: rules, configMap: {name: prometheus-rules}}
  - {name: store-metrics-client, secret: {secretName: gpustack-system-kvcache-store-metrics-client}}
  - {name: data, emptyDir: {}}
YAML
}

# prometheus_ready: the Pod is Ready.
prometheus_ready() {
  [ "$(kubectl -n $KVC_KIT_NAMESPACE get pod prometheus -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

# prometheus_down: what prometheus_up made outside its namespace.
prometheus_down() {
  kubectl delete clusterrole,clusterrolebinding kvcache-kit-prometheus --ignore-not-found >/dev/null 2>&1
}

# prom PATH: GET PATH of the Prometheus API, through the API server's Pod proxy.
prom() { kubectl get --raw "/api/v1/namespaces/$KVC_KIT_NAMESPACE/pods/prometheus:9090/proxy$1" 2>/dev/null; }

# prom_series QUERY: how many series an instant query returns.
prom_series() {
  prom "/api/v1/query?query=$(jq -rn --arg q "$1" '$q | @uri')" | jq -r '.data.result | length' 2>/dev/null
}

# dashboard_queries: every query of the dashboard, its $namespace variable set to "All".
dashboard_queries() {
  jq -r '.panels[] | select(.type != "row") | .targets[].expr' \
    "$_kvc_kit_root/deploy/monitoring/dashboards/kvcache-operator.json" | sed 's/\$namespace/.*/g'
}

# dashboard_empty: the dashboard's queries that return no series, one a line.
dashboard_empty() {
  local query
  while IFS= read -r query; do
    [ "$(prom_series "$query")" -gt 0 ] 2>/dev/null || printf '%s\n' "$query"
  done < <(dashboard_queries)
}

# rules_ok: every rule has been evaluated, none with an error.
rules_ok() {
  prom /api/v1/rules |
    jq -e '[.data.groups[].rules[]] | length > 0 and all(.health == "ok" and (.lastError // "") == "")' >/dev/null
}

# The engines of kit.sh and the demo: Pods the webhook injects for a Binding as vLLM engines, each
# using the store through the store's own client with what was injected, as an engine under
# steady traffic does: every 2 s it looks up the same eight prefix blocks, writing the ones it
# misses, and counts its lookups and hits under vLLM's counter names on a container port named
# `metrics` (a rate needs counters that move while they are scraped; `kvcache probe
# --serve-metrics` serves a finished run's). On SIGTERM each removes the blocks, so that the
# Binding can be released.
STEADY_ENGINE='import http.server, signal, threading
assert rc == 0, f"setup() returned {rc}"
counts = {"queries": 0, "hits": 0}
class Metrics(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("vllm:external_prefix_cache_queries_total %d\n"
                "vllm:external_prefix_cache_hits_total %d\n" % (counts["queries"], counts["hits"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body.encode())
    def log_message(self, *args):
        pass
threading.Thread(target=http.server.ThreadingHTTPServer(("", 8000), Metrics).serve_forever,
                 daemon=True).start()
stopping = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stopping.set())
keys = ["kit-steady-prefix-%d" % i for i in range(8)]
while not stopping.is_set():
    for key in keys:
        counts["queries"] += 1
        if store.is_exist(key) == 1:
            counts["hits"] += 1
        else:
            store.put(key, b"k" * 65536)
    stopping.wait(2)
print("removed", list(store.batch_remove(keys, True)), flush=True)'

# steady_engines NAMESPACE BINDING IMAGE: engine-0 and engine-1, as above, on the real nodes
# (IMAGE has the store's Python client; needs test/managed/lib.sh).
steady_engines() {
  local e
  for e in engine-0 engine-1; do
    injected_python_pod "$1" $e "$2" "$3" "$INJECTED_STORE_SETUP
$STEADY_ENGINE" 8000 || return 1
  done
}

export KVC_KIT_NAMESPACE
export -f prom prom_series rules_ok prometheus_ready
