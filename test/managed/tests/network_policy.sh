#!/usr/bin/env bash
# A managed store's NetworkPolicies, rendered by the operator and enforced by the cluster's real
# implementation (kube-router, test/cluster/nodes.sh), tried from real Pods on the real nodes
# through the Pod network:
#   - Step 1's backend renders <b>-leader and <b>-member-0, owned by it, before its workloads;
#   - an unlabelled Pod in another namespace reaches neither the master's RPC port nor its admin
#     port (through the Service or on the Pod's IP), nor a member's transfer port;
#   - a Pod the webhook injected (Step 2's Binding, in team-a) reaches the RPC port and the
#     member's transfer port, and not the admin port;
#   - the operator's Pod reaches both ports, and `kvcache store status` run inside it reads the
#     ledger; the walkthrough's grant is read back from the master through the policy;
#   - with enforcement stopped (cluster.sh netpol-down) the same unlabelled Pod reaches both ports:
#     the policies kept it out, nothing else; enforcement restarted keeps it out again;
#   - the teardown deletes the policies only once the store's Pods are gone.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
root=$(cd "$(dirname "$0")/../../.." && pwd)
b=mooncake-dram
sys=$KVC_SYSTEM_NAMESPACE
cluster_sh=$root/test/cluster/cluster.sh
[ "$(sed -n 's/^KVC_NETPOL=//p' "$KVC_CLUSTER_DIR/ports.env" 2>/dev/null)" = 1 ] ||
  { echo "SKIP: this cluster runs without NetworkPolicy enforcement (KVC_NETPOL=0)"; exit 77; }
walkthrough_namespace team-a || { echo "FAIL: namespace team-a"; exit 1; }
kubectl annotate namespace team-a --overwrite scheduler.alpha.kubernetes.io/node-selector= >/dev/null
cleanup_netpol() {
  "$cluster_sh" netpol-up "$KVC_CLUSTER_DIR" >/dev/null 2>&1   # never leave the cluster unguarded
  delete_walkthrough
}
trap 'cleanup_netpol; kvc_cleanup' EXIT

kvc_assert_ok "Step 1's backend is created (on the real nodes)" walkthrough_backend 256Mi
kvc_wait_for 240 "it is Ready" kvcb_phase_is $b Ready
kvc_assert_eq "it renders its NetworkPolicies" "$b-leader $b-member-0" \
  "$(kubectl -n "$sys" get networkpolicy -l app.kubernetes.io/instance=$b -o jsonpath='{.items[*].metadata.name}')"
kvc_assert_eq "owned by the backend" "KVCacheBackend/$b KVCacheBackend/$b" \
  "$(kubectl -n "$sys" get networkpolicy -l app.kubernetes.io/instance=$b \
     -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {end}' | sed 's/ $//')"
kvc_assert_ok "Step 2's pool and Binding" kubectl apply -f "$root/examples/walkthrough/step2-pool-binding.yaml"
kvc_wait_for 120 "the Binding's grant is read back from the master (the operator reaches :9003)" bash -c \
  "[ \"\$(kubectl -n team-a get kvcpb team-a -o jsonpath='{.status.conditions[?(@.type==\"QuotaGranted\")].status}')\" = True ]"

leader=$(store_pods $b leader)
leader_ip=$(kubectl -n "$sys" get pod "$leader" -o jsonpath='{.status.podIP}')
service=$b-leader.$sys.svc
member_endpoint=$(admin_curl $b /get_segments_detail | jq -r '[.. | .te_endpoint? // empty][0]')
member_ip=${member_endpoint%:*} member_port=${member_endpoint##*:}
kvc_log "leader $leader_ip, member transfer endpoint $member_endpoint"
kvc_assert_ok "a member registered a transfer endpoint" test -n "$member_port"
image=$(kubectl -n "$sys" get configmap gpustack-settings -o jsonpath='{.data.kv-cache-backend-image}')

# pod NAMESPACE NAME [LABELS-YAML [ANNOTATIONS-YAML]]: an unprivileged Pod on a real node running
# the store image's python3 (a sleep; the injection's appended arguments land in its argv).
pod() {
  local labels=${3:-"{}"} annotations=${4:-"{}"}
  kubectl -n "$1" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2, labels: $labels, annotations: $annotations}
spec:
  nodeSelector: {type: real}
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 65534, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: engine
    image: $image
    imagePullPolicy: Never
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    command: [python3, -c, "import time; time.sleep(3600)"]
YAML
}
running() { [ "$(kubectl -n "$1" get pod "$2" -o jsonpath='{.status.phase}' 2>/dev/null)" = Running ]; }
# reach NAMESPACE POD HOST PORT: "open" when a TCP connection from the Pod is accepted, else why
# not (a policy drops the SYN: a timeout).
reach() {
  kubectl -n "$1" exec "$2" -- python3 -c '
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3).close(); print("open")
except OSError as e:
    print("closed:", e.__class__.__name__)' "$3" "$4"
}
export -f reach

outsider_ns=$(kvc_real_nodes_namespace outsider)
kvc_assert_ok "an unlabelled Pod in namespace $outsider_ns" pod "$outsider_ns" outsider
kvc_assert_ok "a SGLang Pod in team-a opted in with Step 2's Binding" pod team-a client \
  '{kvcache.gpustack.ai/inject: "true"}' \
  '{kvcache.gpustack.ai/binding: team-a, kvcache.gpustack.ai/engine: SGLang, kvcache.gpustack.ai/launch-args-forwarded: "true"}'
kvc_assert_eq "the webhook injected it with the leader Service as its master" "$service:50051" \
  "$(kubectl -n team-a get pod client -o jsonpath='{.spec.containers[0].env[?(@.name=="MOONCAKE_MASTER")].value}')"
kvc_wait_for 90 "both run" bash -c "$(declare -f running); running $outsider_ns outsider && running team-a client"

kvc_assert_contains "the outsider does not reach the RPC port (Service)" "closed" "$(reach "$outsider_ns" outsider "$service" 50051)"
kvc_assert_contains "nor the admin port (Service)" "closed" "$(reach "$outsider_ns" outsider "$service" 9003)"
kvc_assert_contains "nor the RPC port on the leader Pod's IP" "closed" "$(reach "$outsider_ns" outsider "$leader_ip" 50051)"
kvc_assert_contains "nor the admin port there" "closed" "$(reach "$outsider_ns" outsider "$leader_ip" 9003)"
kvc_assert_contains "nor the member's transfer port" "closed" "$(reach "$outsider_ns" outsider "$member_ip" "$member_port")"
kvc_assert_eq "the injected Pod reaches the RPC port" "open" "$(reach team-a client "$service" 50051)"
kvc_assert_eq "and the member's transfer port" "open" "$(reach team-a client "$member_ip" "$member_port")"
kvc_assert_contains "and not the admin port" "closed" "$(reach team-a client "$service" 9003)"

# The operator's image has no shell: the connects run in an ephemeral container of the store image
# in the operator's Pod (its network namespace, address and labels).
operator=$(kubectl -n "$sys" get pods -l app.kubernetes.io/name=kvcache-operator -o jsonpath='{.items[0].metadata.name}')
kvc_assert_ok "an ephemeral container joins the operator's Pod $operator" \
  kubectl -n "$sys" debug "$operator" --image="$image" --image-pull-policy=Never -c netpol-probe \
    --profile=restricted -- python3 -c '
import socket, sys
for port in (50051, 9003):
    try:
        socket.create_connection((sys.argv[1], port), timeout=3).close(); print(port, "open")
    except OSError as e:
        print(port, "closed:", e.__class__.__name__)' "$leader_ip"
probe_done() {
  [ -n "$(kubectl -n "$sys" get pod "$operator" -o jsonpath='{.status.ephemeralContainerStatuses[?(@.name=="netpol-probe")].state.terminated.reason}')" ]
}
kvc_wait_for 60 "it ran" probe_done
probe=$(kubectl -n "$sys" logs "$operator" -c netpol-probe)
kvc_assert_contains "the operator's Pod reaches the RPC port" "50051 open" "$probe"
kvc_assert_contains "and the admin port" "9003 open" "$probe"
kvc_assert_contains "kvcache store status, run in the operator's Pod, reads the ledger" "TENANT LEDGER" \
  "$(kubectl -n "$sys" exec "$operator" -- kvcache store status --admin "$service:9003" \
     --tls-secret "$sys/kvcache-store-operator-client" 2>&1)"

# Broken on purpose: the same outsider with the enforcement stopped.
kvc_assert_ok "NetworkPolicy enforcement is stopped (cluster.sh netpol-down)" "$cluster_sh" netpol-down "$KVC_CLUSTER_DIR"
kvc_assert_eq "without it the outsider reaches the RPC port" "open" "$(reach "$outsider_ns" outsider "$service" 50051)"
kvc_assert_eq "and the admin port's handshake (only mutual TLS is left)" "open" "$(reach "$outsider_ns" outsider "$service" 9003)"
t0=$(date +%s.%N)
kvc_assert_ok "enforcement restarted (cluster.sh netpol-up)" "$cluster_sh" netpol-up "$KVC_CLUSTER_DIR"
kvc_wait_for 30 "the outsider is kept out again" bash -c \
  "reach $outsider_ns outsider $service 9003 | grep -q closed && reach $outsider_ns outsider $service 50051 | grep -q closed"
kvc_log "enforcement in place $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$t0" "$(date +%s.%N)") s after kube-router started"
kvc_assert_eq "the injected Pod still reaches the RPC port" "open" "$(reach team-a client "$service" 50051)"

# The teardown: the policies outlive the store's Pods.
kubectl -n team-a delete pods --all --grace-period=0 --force >/dev/null 2>&1
kubectl -n team-a delete kvcpb team-a --timeout=120s >/dev/null
kubectl delete kvcp shared-dram --timeout=120s >/dev/null
kubectl delete kvcb $b --wait=false >/dev/null
violations=0
for _ in $(seq 1 300); do
  kubectl get kvcb $b -o name >/dev/null 2>&1 || break
  # The policies first, then the Pods: a Pod seen after the policies were seen missing was there
  # when they were (no store Pod starts during teardown; tier-clean Pods are not the store's).
  # The other order counts the instant the last Pod and then the policies go between the reads.
  policies=$(kubectl -n "$sys" get networkpolicy -l app.kubernetes.io/instance=$b -o name 2>/dev/null | grep -c .)
  pods=$(kubectl -n "$sys" get pods -l app.kubernetes.io/instance=$b -o name 2>/dev/null | grep -vc tier-clean)
  [ "$pods" -gt 0 ] && [ "$policies" -lt 2 ] && violations=$((violations + 1))
  sleep 0.5
done
kvc_assert_eq "the backend is gone" "" "$(kubectl get kvcb $b -o name 2>/dev/null)"
kvc_assert_eq "no sample saw a store Pod without both policies" 0 "$violations"
kvc_assert_eq "and the policies went with it" "" \
  "$(kubectl -n "$sys" get networkpolicy -l app.kubernetes.io/instance=$b -o name 2>/dev/null)"
kvc_done
