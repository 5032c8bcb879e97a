#!/usr/bin/env bash
# The real nodes run what we build: the store image's mooncake_master in a Pod on one node serves
# /health through a ClusterIP Service to a Pod on the other node that finds it by DNS name; the
# operator image starts as uid 65532 on a read-only root filesystem; Pods reach the API server as
# kubernetes.default and nothing outside the cluster (no default route, no outside names, no
# registry pulls); Pods of a namespace that did not opt in land on fake nodes; a second cluster
# with real nodes is refused while this one runs.
# Needs: KVC_KVCACHE_BIN (the kvcache binary the images pack; set by CMake).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
root=$(cd "$(dirname "$0")/../../.." && pwd)
read -r node0 node1 _ <<<"$KVC_REAL_NODE_NAMES"

kvc_assert_eq "every real node is Ready, runs the pinned kubelet on containerd" \
  "$(for n in $KVC_REAL_NODE_NAMES; do echo "$n True $KVC_K8S_VERSION containerd"; done)" \
  "$(kubectl get nodes -l type=real -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.status.nodeInfo.kubeletVersion} {.status.nodeInfo.containerRuntimeVersion}{"\n"}{end}' | sed 's|://.*||')"
kvc_assert_eq "two real nodes (the seed's 'two nodes at 8Gi show 16Gi')" "2" "$(wc -w <<<"$KVC_REAL_NODE_NAMES")"

kvc_log "building the store and operator images (cached by content) and loading them"
images=$("$root/images/build.sh" --kvcache "${KVC_KVCACHE_BIN:?KVC_KVCACHE_BIN is not set}" operator store) \
  || { echo "FAIL: images/build.sh"; exit 1; }
eval "$images"
kvc_assert_ok "the images load into every real node" "$root/test/cluster/cluster.sh" load "$KVC_CLUSTER_DIR" \
  "$KVC_IMAGE_OPERATOR_ARCHIVE" "$KVC_IMAGE_STORE_ARCHIVE"

ns=$(kvc_real_nodes_namespace real-nodes)
kvc_assert_ok "a master Pod on $node0 and its Service are created" kubectl -n "$ns" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: master, labels: {app: master}}
spec:
  nodeSelector: {kubernetes.io/hostname: $node0}
  containers:
  - name: master
    image: $KVC_IMAGE_STORE
    command: [mooncake_master, --rpc_address=0.0.0.0, --rpc_port=50051, --metrics_port=9003]
    readinessProbe: {httpGet: {path: /health, port: 9003}, periodSeconds: 1}
    securityContext: {runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false}
---
apiVersion: v1
kind: Service
metadata: {name: master}
spec:
  selector: {app: master}
  ports: [{name: admin, port: 9003}, {name: rpc, port: 50051}]
YAML
kvc_assert_ok "the master Pod becomes Ready on $node0" kubectl -n "$ns" wait --for=condition=Ready pod/master --timeout=90s
kvc_assert_eq "the master runs as uid 65532 (the store image's user)" "65532" \
  "$(kubectl -n "$ns" exec master -- python3 -c 'import os; print(os.getuid())' 2>&1)"

# The client checks from inside a Pod on the other node and prints one line per fact.
probe='
import json, os, socket, ssl, time, urllib.request
def line(k, v): print(f"{k}={v}", flush=True)
line("master-address", socket.gethostbyname("master.'$ns'.svc"))
# The Service routes to the master once kube-proxy has its endpoint, a moment after it is Ready.
for attempt in range(20):
    try:
        health = json.loads(urllib.request.urlopen("http://master.'$ns'.svc:9003/health", timeout=5).read())
        break
    except OSError as e:
        line("health-attempt", f"{attempt}: {e}")
        time.sleep(1)
line("service-ready", health["service_ready"])
line("kubernetes-default", socket.gethostbyname("kubernetes.default"))
sa = "/var/run/secrets/kubernetes.io/serviceaccount"
req = urllib.request.Request("https://kubernetes.default.svc/api/v1/namespaces/'$ns'/pods/client",
                             headers={"Authorization": "Bearer " + open(sa + "/token").read()})
try:
    urllib.request.urlopen(req, context=ssl.create_default_context(cafile=sa + "/ca.crt"), timeout=5)
    line("apiserver", "200")
except urllib.error.HTTPError as e:
    line("apiserver", e.code)
routes = [l.split() for l in open("/proc/net/route").read().splitlines()[1:]]
line("default-route", any(r[1] == "00000000" for r in routes))
try:
    socket.gethostbyname("deb.debian.org"); line("outside-name", "resolved")
except OSError:
    line("outside-name", "unresolved")
'
kvc_assert_ok "a client Pod on $node1 runs the probe" kubectl -n "$ns" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  nodeSelector: {kubernetes.io/hostname: $node1}
  restartPolicy: Never
  containers:
  - name: client
    image: $KVC_IMAGE_STORE
    command: [python3, -c, $(printf '%s' "$probe" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')]
YAML
kvc_wait_for 90 "the client Pod completes" \
  bash -c "[ \"\$(kubectl -n '$ns' get pod client -o jsonpath='{.status.phase}')\" = Succeeded ]"
out=$(kubectl -n "$ns" logs client 2>&1)
kvc_assert_eq "the master's name resolves to its ClusterIP from the other node" \
  "master-address=$(kubectl -n "$ns" get svc master -o jsonpath='{.spec.clusterIP}')" "$(grep '^master-address=' <<<"$out")"
kvc_assert_eq "mooncake_master's /health answers service_ready through the Service" "service-ready=True" "$(grep '^service-ready=' <<<"$out")"
kvc_assert_eq "kubernetes.default resolves to the API server's ClusterIP" "kubernetes-default=10.96.0.1" "$(grep '^kubernetes-default=' <<<"$out")"
kvc_assert_eq "the API server answers the Pod's token (403: authenticated, no RBAC grant)" "apiserver=403" "$(grep '^apiserver=' <<<"$out")"
kvc_assert_eq "the Pod has no default route" "default-route=False" "$(grep '^default-route=' <<<"$out")"
kvc_assert_eq "a name outside the cluster does not resolve" "outside-name=unresolved" "$(grep '^outside-name=' <<<"$out")"

kvc_assert_ok "an operator-image Pod is created (read-only root, non-root)" kubectl -n "$ns" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: operator-image}
spec:
  nodeSelector: {type: real}
  restartPolicy: Never
  containers:
  - name: kvcache
    image: $KVC_IMAGE_OPERATOR
    args: [--version]
    securityContext: {runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
YAML
kvc_wait_for 60 "the operator image runs kvcache to completion" \
  bash -c "[ \"\$(kubectl -n '$ns' get pod operator-image -o jsonpath='{.status.phase}')\" = Succeeded ]"
kvc_assert_contains "the operator image's kvcache prints its version" "kvcache" "$(kubectl -n "$ns" logs operator-image 2>&1)"

kvc_assert_ok "a Pod with an image nobody imported is created" kubectl -n "$ns" run not-imported \
  --image=registry.invalid/kvcache/not-imported:1 --overrides='{"spec":{"nodeSelector":{"type":"real"}}}' --restart=Never
kvc_wait_for 60 "its pull fails on the node without leaving the machine (the dead loopback proxy)" \
  bash -c "kubectl -n '$ns' get events --field-selector involvedObject.name=not-imported -o jsonpath='{.items[*].message}' | grep -q '127.0.0.1:9'"

fake_ns=$(kvc_fresh_namespace fake-default)
kubectl -n "$fake_ns" run engine --image=registry.invalid/kvcache/engine:1 --restart=Never >/dev/null
kvc_assert_eq "a Pod of a namespace that did not opt in gets nodeSelector type=kwok" "kwok" \
  "$(kubectl -n "$fake_ns" get pod engine -o jsonpath='{.spec.nodeSelector.type}')"
kvc_wait_for 60 "and runs on a fake node" \
  bash -c "kubectl -n '$fake_ns' get pod engine -o jsonpath='{.spec.nodeName}' | grep -q '^kwok-node-'"

other=$(mktemp -d)
refusal=$(KVC_REAL_NODES=2 "$root/test/cluster/cluster.sh" up "$other/cluster" 2>&1)
kvc_assert_contains "a second cluster with real nodes is refused, naming this one" \
  "another cluster's real nodes run on this machine" "$refusal"
kvc_assert_contains "the refusal names the way out" "KVC_REAL_NODES=0" "$refusal"
"$root/test/cluster/cluster.sh" down "$other/cluster" --purge >/dev/null 2>&1
rm -rf "$other"
kvc_assert_ok "this cluster still answers after the refusal" kubectl get --raw /readyz
kvc_done
