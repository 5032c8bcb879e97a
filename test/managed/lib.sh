# shellcheck shell=bash
# Helpers of the managed-backend suite (on top of test/cluster/lib.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
KVC_SYSTEM_NAMESPACE=gpustack-system

# object_condition KIND NAME TYPE [NAMESPACE]: "Status/Reason" of any object's condition, or ""
# while it is absent; object_condition_is KIND NAME TYPE STATUS/REASON [NAMESPACE].
object_condition() {
  kubectl ${4:+-n "$4"} get "$1" "$2" -o jsonpath="{.status.conditions[?(@.type==\"$3\")].status}/{.status.conditions[?(@.type==\"$3\")].reason}" 2>/dev/null | sed 's|^/$||'
}
object_condition_is() { [ "$(object_condition "$1" "$2" "$3" "${5:-}")" = "$4" ]; }
# object_message KIND NAME TYPE [NAMESPACE]: the condition's message.
object_message() {
  kubectl ${4:+-n "$4"} get "$1" "$2" -o jsonpath="{.status.conditions[?(@.type==\"$3\")].message}" 2>/dev/null
}
# kvcb_condition BACKEND TYPE: "Status/Reason" of the backend's condition, or "" while absent.
kvcb_condition() { object_condition kvcb "$1" "$2"; }
# kvcb_condition_is BACKEND TYPE STATUS/REASON (for kvc_wait_for)
kvcb_condition_is() { [ "$(kvcb_condition "$1" "$2")" = "$3" ]; }
# kvcb_field BACKEND JSONPATH
kvcb_field() { kubectl get kvcb "$1" -o jsonpath="$2" 2>/dev/null; }
kvcb_phase_is() { [ "$(kvcb_field "$1" '{.status.phase}')" = "$2" ]; }

# store_pods BACKEND COMPONENT: the names of the store's Pods (leader | member-<i>).
store_pods() {
  kubectl -n "$KVC_SYSTEM_NAMESPACE" get pods \
    -l "app.kubernetes.io/instance=$1,app.kubernetes.io/component=$2" \
    -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'
}

# signal_store_process POD PROGRAM SIGNAL: sends SIGNAL (STOP, CONT, KILL, …) to the process of
# PROGRAM (mc_store_rest_server, mooncake_master) inside the store Pod, with the image's python3
# (the image has no procps).
signal_store_process() {
  kubectl -n "$KVC_SYSTEM_NAMESPACE" exec "$1" -- python3 -c '
import os, signal, sys
program, sig = sys.argv[1], getattr(signal, "SIG" + sys.argv[2])
hits = 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    # A binary, or a Python entry point (python3 /opt/mooncake/bin/mc_store_rest_server).
    if any(os.path.basename(a.decode(errors="replace")) == program for a in argv[:2]):
        os.kill(int(pid), sig); hits += 1
sys.exit(0 if hits else 1)
' "$2" "$3"
}

# leader_admin BACKEND: host:port of the leader Service's admin port (the host routes the Service
# range to the bridge, so the test reads the master as the operator does, through the Service).
leader_admin() {
  echo "$(kubectl -n "$KVC_SYSTEM_NAMESPACE" get service "$1-leader" -o jsonpath='{.spec.clusterIP}'):9003"
}

# admin_tls_dir [SECRET]: a directory holding tls.crt, tls.key and ca.crt of the client Secret
# (default: the operator's own, kvcache-store-operator-client), written once per test.
admin_tls_dir() {
  local secret=${1:-kvcache-store-operator-client} dir
  dir=$KVC_CLEANUP_FILE.d/admin-tls-$secret
  if [ ! -s "$dir/tls.key" ]; then
    mkdir -p "$dir" && chmod 700 "$dir"
    for key in tls.crt tls.key ca.crt; do
      kubectl -n "$KVC_SYSTEM_NAMESPACE" get secret "$secret" -o json |
        jq -r --arg k "$key" '.data[$k] | @base64d' >"$dir/$key" || return 1
    done
  fi
  echo "$dir"
}

# admin_curl BACKEND PATH [CURL-ARGS...]: curl of the master's admin API through the leader
# Service, over mutual TLS as the operator (ADMIN_SECRET=... for another client Secret): the
# certificate names <backend>-leader.<ns>.svc, reached at the Service's ClusterIP.
admin_curl() {
  local b=$1 path=$2 dir; shift 2
  dir=$(admin_tls_dir "${ADMIN_SECRET:-}") || return 1
  curl -sf --max-time 3 --cacert "$dir/ca.crt" --cert "$dir/tls.crt" --key "$dir/tls.key" \
    --connect-to "$b-leader.$KVC_SYSTEM_NAMESPACE.svc:9003:$(leader_admin "$b")" \
    "https://$b-leader.$KVC_SYSTEM_NAMESPACE.svc:9003$path" "$@"
}

# For the checks that run in `bash -c` (kvc_wait_for with a pipeline).
export KVC_SYSTEM_NAMESPACE
export -f leader_admin admin_tls_dir admin_curl

# segments BACKEND: how many segments the master lists (through the Service), or "-".
segments() {
  admin_curl "$1" /get_segments_detail 2>/dev/null |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["segments"]))' 2>/dev/null || echo -
}

# master_serves BACKEND: /health through the Service says service_ready.
master_serves() {
  admin_curl "$1" /health 2>/dev/null | grep -q '"service_ready": *true'
}

# walkthrough_namespace NAME: the seed's namespace (team-a), which other suites on the shared
# cluster use too: waits out an earlier deletion, creates it when absent, deletes it at exit.
walkthrough_namespace() {
  local phase
  for _ in $(seq 1 120); do
    phase=$(kubectl get namespace "$1" -o jsonpath='{.status.phase}' 2>/dev/null)
    [ "$phase" != Terminating ] && break
    sleep 1
  done
  if [ -z "$phase" ] || [ "$phase" = Terminating ]; then
    kvc_create_namespace "$1" >/dev/null || return 1
  else
    printf 'namespace/%s\n' "$1" >>"$KVC_CLEANUP_FILE"
  fi
}

# walkthrough_backend CAPACITY-PER-MEMBER: Step 1's manifest as written (mooncake-dram), placed on
# the real nodes (nodeSelector {type: real}: the seed's kubernetes.io/os matches the fake nodes
# too) with this capacity per member.
walkthrough_backend() {
  sed -e 's|kubernetes.io/os: linux|type: real|' -e "s|capacityPerMember: 8Gi|capacityPerMember: $1|" \
    "$(dirname "${BASH_SOURCE[0]}")/../../examples/walkthrough/step1-backend.yaml" | kubectl apply -f -
}

# delete_walkthrough [POD-SELECTOR]: what a walkthrough test made, in the order the releases need:
# team-a's Pods (all, or those SELECTOR selects), its Bindings, the pool shared-dram, then the
# backend mooncake-dram.
delete_walkthrough() {
  local pods=(--all); [ -n "${1:-}" ] && pods=(-l "$1")
  kubectl -n team-a delete pods "${pods[@]}" --grace-period=0 --force >/dev/null 2>&1
  kubectl -n team-a delete kvcpb --all --timeout=120s >/dev/null 2>&1
  kubectl delete kvcp shared-dram --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend mooncake-dram
}

# managed_backend NAME CAPACITY-PER-MEMBER [LEADER-YAML] [SELECTOR-YAML]: applies Step 1's
# manifest scaled to this machine (one DRAM group, on the real nodes unless SELECTOR says
# otherwise), with this leader block (default {}).
managed_backend() {
  local leader=${3:-'{}'} selector=${4:-'{type: real}'}
  kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: $1}
spec:
  type: Mooncake
  connection:
    managed:
      leader: $leader
      members:
        - nodeSelector: $selector
          medium: DRAM
          capacityPerMember: $2
YAML
}

# tier_backend NAME NODE DIR [CLEAN] [LEADER-YAML]: a backend whose one member group runs on NODE
# (kubernetes.io/hostname) with a local disk tier at DIR (1Gi, cleanAfterDelete CLEAN, default
# false) and 256Mi of DRAM: both real nodes share this machine's filesystem, so each tier backend
# selects one node and its own directory.
tier_backend() {
  kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: $1}
spec:
  type: Mooncake
  connection:
    managed:
      leader: ${5:-{\}}
      members:
        - nodeSelector: {kubernetes.io/hostname: $2}
          medium: DRAM
          capacityPerMember: 256Mi
          localDisks:
            - path: $3
              capacity: 1Gi
              cleanAfterDelete: ${4:-false}
YAML
}

# admit_namespace BACKEND NAMESPACE: a NetworkPolicy <b>-admit-<ns> in gpustack-system letting
# every Pod of NAMESPACE reach every port of the backend's Pods: what an administrator adds for a
# store client the webhook did not inject (docs/security.md). The operator never prunes it (it
# carries none of its labels): the test deletes it with unadmit_namespace.
admit_namespace() {
  kubectl -n "$KVC_SYSTEM_NAMESPACE" apply -f - >/dev/null <<YAML
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: $1-admit-$2}
spec:
  podSelector: {matchLabels: {app.kubernetes.io/name: kv-cache-backend, app.kubernetes.io/instance: $1}}
  policyTypes: [Ingress]
  ingress:
  - from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $2}}}]
YAML
}
unadmit_namespace() {
  kubectl -n "$KVC_SYSTEM_NAMESPACE" delete networkpolicy "$1-admit-$2" --ignore-not-found >/dev/null 2>&1
}

# delete_backend BACKEND: deletes it and waits until it and everything it rendered are gone.
delete_backend() {
  kubectl delete kvcb "$1" --ignore-not-found --timeout=300s >/dev/null 2>&1
}

# signal_pod_processes POD SIGNAL: sends SIGNAL, from the host, to every process of the store Pod
# POD (the real nodes run on this machine: a container's processes are the host's, and a
# container's init can only be signalled from outside its PID namespace).
signal_pod_processes() {
  local pid hits=0
  for pid in /proc/[0-9]*; do
    if tr '\0' '\n' 2>/dev/null <"$pid/environ" | grep -qx "KUBERNETES_POD_NAME=$1"; then
      kill "-$2" "${pid#/proc/}" 2>/dev/null && hits=$((hits + 1))
    fi
  done
  [ "$hits" -gt 0 ]
}

# pool_binding NAMESPACE POOL NAME CEILING [DOMAIN]: a KVCachePoolBinding NAME of POOL in
# NAMESPACE, for reuse domain DOMAIN (default: NAME).
pool_binding() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: $3, namespace: $1}
spec:
  poolRef: {name: $2}
  quota: {ceiling: $4}
  domain: {name: ${5:-$3}, blockSize: 64, dtype: bfloat16}
YAML
}
# external_backend NAME RPC ADMIN: an external KVCacheBackend NAME whose master answers RPCs at
# RPC and its plain-HTTP admin API at ADMIN (host:port each).
external_backend() {
  kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: $1}
spec:
  connection:
    external:
      endpoints:
        - {name: Client, address: "$2"}
        - {name: Admin, address: "$3"}
YAML
}
# host_pid VAR=VALUE: the first process on this host whose environment holds VAR=VALUE (the real
# nodes run here: a Pod's processes are the host's; POD_NAME or KUBERNETES_POD_NAME find a Pod's).
host_pid() {
  local pid
  for pid in /proc/[0-9]*; do
    if tr '\0' '\n' 2>/dev/null <"$pid/environ" | grep -qx -- "$1"; then
      echo "${pid#/proc/}"; return 0
    fi
  done
  return 1
}
# binding_granted NAMESPACE NAME: the Binding's QuotaGranted is True.
binding_granted() {
  [ "$(kubectl -n "$1" get kvcpb "$2" -o jsonpath='{.status.conditions[?(@.type=="QuotaGranted")].status}' 2>/dev/null)" = True ]
}
# pod_injected NAMESPACE NAME: the Pod carries the webhook's client configuration.
pod_injected() {
  kubectl -n "$1" get pod "$2" -o jsonpath='{.metadata.annotations.kvcache\.gpustack\.ai/client-config}' 2>/dev/null | grep -q tenant_id
}

# INJECTED_STORE_SETUP: the Python lines that open the store exactly as the webhook configured the
# Pod (the vLLM file vehicle: MOONCAKE_CONFIG_PATH; POD_IP from the downward API), leaving `config`,
# `store` and `rc` (setup's return code) to the lines a test appends. json_string TEXT: TEXT as one
# JSON (and so YAML) string, to put a script into a manifest's args.
INJECTED_STORE_SETUP='import json, os, sys, time
from mooncake.store import MooncakeDistributedStore
config = json.load(open(os.environ["MOONCAKE_CONFIG_PATH"]))
store = MooncakeDistributedStore()
rc = store.setup(local_hostname=os.environ["POD_IP"], metadata_server=config["metadata_server"],
                 global_segment_size=config["global_segment_size"],
                 local_buffer_size=config["local_buffer_size"], protocol=config["protocol"],
                 rdma_devices=config["device_name"],
                 master_server_addr=config["master_server_address"],
                 tenant_id=config["tenant_id"])'
json_string() { jq -Rs . <<<"$1"; }

# injected_python_pod NAMESPACE NAME BINDING IMAGE PROGRAM [METRICS_PORT]: a Pod on a real node,
# opted in with BINDING as a vLLM engine (the webhook writes its configuration; it declares that
# its launcher forwards arguments, as python3 -c ignores the engine flags appended to it), running
# the Python PROGRAM in IMAGE, never restarted; with METRICS_PORT, a container port named metrics.
injected_python_pod() {
  local ports="[]"
  [ -n "${6:-}" ] && ports="[{name: metrics, containerPort: $6}]"
  kubectl -n "$1" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $2
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations:
    kvcache.gpustack.ai/binding: $3
    kvcache.gpustack.ai/engine: vLLM
    kvcache.gpustack.ai/launch-args-forwarded: "true"
spec:
  restartPolicy: Never
  nodeSelector: {type: real}
  containers:
  - name: $2
    image: $4
    imagePullPolicy: Never
    env:
    - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    ports: $ports
    command: [python3, -c]
    args: [$(json_string "$5")]
YAML
}

# delete_bindings_of NAMESPACE...: every Pod (not waited for) and then every Binding (waited for,
# 120 s: a Binding goes once its tenant is empty) of each NAMESPACE given ("" ones skipped).
delete_bindings_of() {
  local n
  for n in "$@"; do
    [ -n "$n" ] || continue
    kubectl -n "$n" delete pod --all --wait=false >/dev/null 2>&1
    kubectl -n "$n" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  done
}

# injected_store_pod NAMESPACE NAME BINDING IMAGE SCRIPT: injected_python_pod running the Python
# lines SCRIPT after INJECTED_STORE_SETUP (IMAGE has the store's Python client).
injected_store_pod() {
  injected_python_pod "$1" "$2" "$3" "$4" "$INJECTED_STORE_SETUP
$5"
}

# managed_pool NAME BACKEND TOTAL: a KVCachePool NAME drawing on BACKEND, quota.total TOTAL.
managed_pool() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: $1}
spec:
  backends: [$2]
  quota: {total: $3}
YAML
}

# fixture_image NAME: images/build.sh's test-only image NAME (upstream, noshell) built (cached by
# content) and imported into the real nodes; prints its pinned reference.
fixture_image() {
  local root lines var archive
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  lines=$("$root/images/build.sh" "$1") || return 1
  var=KVC_IMAGE_${1^^}
  archive=$(sed -n "s/^${var}_ARCHIVE=//p" <<<"$lines")
  "$root/test/cluster/cluster.sh" load "$KVC_CLUSTER_DIR" "$archive" >&2 || return 1
  sed -n "s/^${var}_PINNED=//p" <<<"$lines"
}

# labelled_vllm_pod NAME BINDING [NAMESPACE]: a vLLM Pod in NAMESPACE (default team-a) opted into
# injection with BINDING (the webhook writes its client configuration; kwok runs it on a fake GPU
# node).
labelled_vllm_pod() {
  kubectl -n "${3:-team-a}" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: $2, kvcache.gpustack.ai/engine: vLLM}
spec:
  containers:
  - name: server
    image: gpustack/runner:cuda13.0-vllm0.29.0
    command: [vllm]
    args: [serve, Qwen/Qwen2.5-7B-Instruct]
YAML
}

# diagnose_finds KIND OBJECT SYMPTOM [EXIT]: `kvcache diagnose -o json` on the live cluster lists
# SYMPTOM (the Troubleshooting table's words) on KIND OBJECT ("name" or "namespace/name"), and
# exits EXIT (default 3, a problem; "" for a note: another test's leftovers may hold a problem).
diagnose_finds() {
  local out rc=0
  out=$("${KVC_KVCACHE_BIN:?}" diagnose -o json --kubeconfig "$KUBECONFIG" 2>&1) || rc=$?
  jq -e --arg k "$1" --arg o "$2" --arg s "$3" \
    '.findings | any(.kind == $k and .object == $o and .symptom == $s)' <<<"$out" >/dev/null || return 1
  [ -z "${4-3}" ] || [ "$rc" = "${4-3}" ]
}
# diagnose_clear KIND OBJECT: kvcache diagnose lists nothing on KIND OBJECT.
diagnose_clear() {
  "${KVC_KVCACHE_BIN:?}" diagnose -o json --kubeconfig "$KUBECONFIG" 2>/dev/null |
    jq -e --arg k "$1" --arg o "$2" '.findings | all(.kind != $k or .object != $o)' >/dev/null
}
export -f diagnose_finds diagnose_clear
