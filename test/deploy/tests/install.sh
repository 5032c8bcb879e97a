#!/usr/bin/env bash
# The install a user does, on the real nodes: build the operator image, `kubectl apply -k` the
# local overlay pinned to it, and then, through the operator's own Service, certificate and RBAC:
#   - the webhooks answer (timed from the apply), the caBundles hold the operator's CA;
#   - the controllers read a real store outside the cluster (on the bridge address) and report
#     the backend, pool and Binding Ready, and a labelled vLLM Pod is injected;
#   - no API call of the operator was forbidden (a verb missing from the ClusterRole fails here);
#   - deleting the Lease holder's Pod: the other replica takes the Lease and reconciles a new
#     Binding (timed), while Pods keep being admitted (every failure counted; the goal is zero);
#     then SIGKILL of the holder's container: the Lease expires and is taken (timed, failures
#     reported);
#   - an injected Pod on a real node, restarting: the kubelet's status writes are never refused and
#     never reach the freeze webhook (its matchCondition);
#   - 0 replicas: an opted-in Pod is refused (fail closed), an UPDATE of one is admitted (fail open);
#   - `kubectl delete -k`: nothing of ours is left and a labelled Pod is no longer blocked.
# Then it puts back what the shared cluster had (the CRDs and gpustack-system) for later tests.
# usage: install.sh KVCACHE-BINARY
set -uo pipefail
. "$(dirname "$0")/../../cluster/lib.sh"
kvc_init
kvc_require_real_nodes
kvcache=${1:?usage: install.sh KVCACHE-BINARY}
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d)
sys=gpustack-system
store=$work/store
cleanup_install() {
  [ -n "${loop_pid:-}" ] && kill "$loop_pid" 2>/dev/null
  "$root/test/store/store.sh" down "$store" >/dev/null 2>&1
  kubectl delete kvcachepool install-pool --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete kvcachebackend install-dram --ignore-not-found --wait=false >/dev/null 2>&1
  rm -rf "$work"
}
trap 'cleanup_install; kvc_cleanup' EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

kvc_log "the operator and store images (images/build.sh, cached by content), loaded into the real nodes"
images=$("$root/images/build.sh" --kvcache "$kvcache" operator store) || { echo "FAIL: images/build.sh"; exit 1; }
eval "$images"
"$root/test/cluster/cluster.sh" load "$KVC_CLUSTER_DIR" "$KVC_IMAGE_OPERATOR_ARCHIVE" "$KVC_IMAGE_STORE_ARCHIVE" >/dev/null \
  || { echo "FAIL: cluster.sh load"; exit 1; }

# The local overlay, pinned to this very build (its content tag) as scripts/run.sh does it.
"$root/deploy/overlays/local/pin.sh" "$work/overlay" "$KVC_IMAGE_OPERATOR_PINNED"

kvc_log "a real store outside the cluster, listening on the bridge address $KVC_HOST_ADDRESS"
KVC_STORE_HOST=$KVC_HOST_ADDRESS "$root/test/store/store.sh" up "$store" >"$work/store.log" 2>&1 \
  || { tail -20 "$work/store.log"; echo "FAIL: store.sh up"; exit 1; }
# shellcheck disable=SC1091
. "$store/env"

# Opted in to the real nodes (for the restarting Pod below); the other Pods say type=kwok.
ns=$(kvc_real_nodes_namespace install)
# webhook_answers: a labelled Pod (dry run) gets our webhook's own answer, not a call failure.
webhook_answers() {
  local out
  out=$(kubectl -n "$ns" run probe --dry-run=server --image=vllm/vllm-openai:v0.29.0 \
    --labels=kvcache.gpustack.ai/inject=true -o name 2>&1)
  ! grep -q 'failed calling webhook' <<<"$out"
}

t0=$(now)
kvc_assert_ok "kubectl apply --server-side -k (the local overlay) installs everything" \
  kubectl apply --server-side --force-conflicts -k "$work/overlay"
kvc_assert_ok "the operator Deployment rolls out (2 replicas)" \
  kubectl -n "$sys" rollout status deploy/kvcache-operator --timeout=180s
kvc_wait_for 120 "the webhooks answer through the Service" webhook_answers
install_seconds=$(since "$t0")
kvc_log "install: apply -> serving webhook in ${install_seconds}s"
kubectl get all -n "$sys" >&2
kvc_assert_eq "the two replicas run on different real nodes" "2" \
  "$(kubectl -n "$sys" get pods -l app.kubernetes.io/name=kvcache-operator -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | grep -c .)"
ca=$(kubectl -n "$sys" get secret kvcache-operator-webhook-tls -o jsonpath='{.data.ca\.crt}')
kvc_assert_eq "the operator made its certificate Secret (kubernetes.io/tls)" "kubernetes.io/tls" \
  "$(kubectl -n "$sys" get secret kvcache-operator-webhook-tls -o jsonpath='{.type}')"
for kind in mutatingwebhookconfiguration validatingwebhookconfiguration; do
  name=gpustack-worker-mutation; [ $kind = validatingwebhookconfiguration ] && name=gpustack-worker-validation
  kvc_assert_eq "every caBundle of $name holds the operator's CA" "$ca" \
    "$(kubectl get $kind $name -o jsonpath='{range .webhooks[*]}{.clientConfig.caBundle}{"\n"}{end}' | sort -u)"
done

kvc_assert_ok "an external backend on that store and a pool are created" kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: install-dram}
spec:
  connection:
    external:
      endpoints:
        - {name: Client, address: "$KVC_STORE_RPC"}
        - {name: Admin, address: "$KVC_STORE_ADMIN"}
---
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: install-pool}
spec:
  backends: [install-dram]
  quota: {total: 1Gi}
YAML
# binding NAME CEILING: a Binding of the pool in $ns, its domain named after it.
binding() {
  kubectl -n "$ns" apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: $1}
spec:
  poolRef: {name: install-pool}
  quota: {ceiling: $2}
  domain: {name: install-$1, blockSize: 64, dtype: bfloat16}
YAML
}
kvc_assert_ok "and a Binding in $ns" binding b1 256Mi
kvc_assert_ok "the backend and the pool are Ready (read from the store by the in-cluster operator)" \
  kubectl wait --for=jsonpath='{.status.phase}'=Ready --timeout=120s kvcb/install-dram kvcp/install-pool
kvc_assert_ok "the Binding's quota is granted" kubectl -n "$ns" wait --for=condition=QuotaGranted --timeout=60s kvcpb/b1
# pod_yaml NAME [NODE-TYPE [IMAGE]]: a labelled vLLM Pod of Binding b1.
pod_yaml() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: b1, kvcache.gpustack.ai/engine: vLLM}
spec:
  nodeSelector: {type: ${2:-kwok}}
  containers:
  - name: server
    image: ${3:-vllm/vllm-openai:v0.29.0}
    command: [vllm]
    args: [serve, --model, Qwen/Qwen3-8B]
YAML
}
kvc_assert_ok "a labelled vLLM Pod is admitted" bash -c "$(declare -f pod_yaml); pod_yaml chat-0 | kubectl -n '$ns' create -f -"
kvc_assert_contains "and injected with the store's client configuration" "$KVC_STORE_RPC" \
  "$(kubectl -n "$ns" get pod chat-0 -o jsonpath='{.metadata.annotations.kvcache\.gpustack\.ai/client-config}')"

# The kubelet writes the status of an injected Pod that keeps restarting (the store image has no
# vllm): none of those writes may be refused, and none reaches the freeze webhook.
# metric_sum: the validate-pod answers of every replica; "unreadable" unless both replicas'
# /metrics answered with the admission counters (a silent 0 would make the check below vacuous).
metric_sum() {
  local ip n=0 v read=0 page
  for ip in $(kubectl -n "$sys" get pods -l app.kubernetes.io/name=kvcache-operator -o jsonpath='{.items[*].status.podIP}'); do
    page=$(curl -sf --max-time 3 "http://$ip:8080/metrics") || continue
    grep -q 'kvcache_admission_requests_total' <<<"$page" || continue
    v=$(awk '/^kvcache_admission_requests_total\{.*webhook="validate-pod"/ {n += $NF} END {print n + 0}' <<<"$page")
    n=$((n + v)) read=$((read + 1))
  done
  [ "$read" = 2 ] && echo "$n" || echo "unreadable ($read of 2 replicas)"
}
validate_before=$(metric_sum)
kvc_assert_eq "both replicas' admission counters are read" "yes" \
  "$([[ $validate_before =~ ^[0-9]+$ ]] && echo yes || echo "$validate_before")"
kvc_assert_ok "an injected Pod is created on a real node" \
  bash -c "$(declare -f pod_yaml); pod_yaml restarting real '$KVC_IMAGE_STORE' | kubectl -n '$ns' create -f -"
kvc_wait_for 90 "the kubelet reports it restarting (restartCount >= 2)" \
  bash -c "[ \"\$(kubectl -n '$ns' get pod restarting -o jsonpath='{.status.containerStatuses[0].restartCount}')\" -ge 2 ]"
kvc_assert_eq "no kubelet status write was refused" "" \
  "$(grep -h 'restarting' "$KVC_CLUSTER_DIR"/kubelet-*.log | grep -iE 'denied the request|admission webhook' | head -3)"
kvc_assert_eq "the kubelet's status writes never reached the freeze webhook" "$validate_before" "$(metric_sum)"
kubectl -n "$ns" delete pod restarting --wait=false >/dev/null

# handover HOW BINDING: end the Lease holder while a labelled Pod is admitted every 0.2 s, and time
# until a Binding created right after is reconciled by whichever replica leads then. HOW: delete
# = its Pod is deleted: the operator stops gracefully, releases the Lease and the other replica
# takes it; kill = its container is SIGKILLed through the CRI: the kubelet restarts it in the same
# Pod, under the same identity (the Pod name), and it resumes the Lease it still holds, unless
# the other replica saw it expire first. Sets LEASE_S (delete: until the other replica holds
# it), RECONCILE_S, LEADER (who leads after), TOTAL, FAILED.
handover() {
  local how=$1 name=$2 holder node cid t loop
  holder=$(kubectl -n "$sys" get lease kvcache-operator -o jsonpath='{.spec.holderIdentity}')
  kvc_assert_contains "one replica holds the Lease" "kvcache-operator-" "$holder"
  : >"$work/admissions"
  (
    i=0
    while :; do
      i=$((i + 1))
      if out=$(pod_yaml "ha-$i" | kubectl -n "$ns" create --dry-run=server -f - -o name 2>&1); then
        echo "ok" >>"$work/admissions"
      else
        echo "FAILED $(tr '\n' ' ' <<<"$out")" >>"$work/admissions"
      fi
      sleep 0.2
    done
  ) &
  loop=$!
  loop_pid=$loop
  sleep 2
  t=$(now)
  if [ "$how" = delete ]; then
    kubectl -n "$sys" delete pod "$holder" --wait=false >/dev/null
  else
    node=$(kubectl -n "$sys" get pod "$holder" -o jsonpath='{.spec.nodeName}')
    cid=$(kubectl -n "$sys" get pod "$holder" -o jsonpath='{.status.containerStatuses[0].containerID}')
    "$KVC_CRICTL_BIN/crictl" --runtime-endpoint "unix://$KVC_CLUSTER_DIR/node-${node##*-}/containerd/containerd.sock" \
      stop --timeout 0 "${cid#containerd://}" >/dev/null
  fi
  new_holder() {
    local h; h=$(kubectl -n "$sys" get lease kvcache-operator -o jsonpath='{.spec.holderIdentity}')
    [ -n "$h" ] && [ "$h" != "$holder" ]
  }
  LEASE_S=-
  if [ "$how" = delete ]; then
    kvc_wait_for 30 "the other replica takes the Lease" new_holder
    LEASE_S=$(since "$t")
  fi
  # Created as a client would: again while the validation webhook's call lands on the dead replica
  # (failurePolicy Fail refuses it, "connection refused").
  kvc_wait_for 30 "a Binding is created after the $how" binding "$name" 64Mi
  kvc_assert_ok "the leader reconciles a Binding created after the $how" \
    kubectl -n "$ns" wait --for=condition=QuotaGranted --timeout=60s "kvcpb/$name"
  RECONCILE_S=$(since "$t")
  LEADER=$(kubectl -n "$sys" get lease kvcache-operator -o jsonpath='{.spec.holderIdentity}')
  [ "$LEADER" = "$holder" ] && LEADER="the same Pod, restarted" || LEADER="the other replica"
  kvc_assert_ok "the Deployment is back to 2 ready replicas" \
    kubectl -n "$sys" rollout status deploy/kvcache-operator --timeout=120s
  sleep 2
  kill "$loop" 2>/dev/null; wait "$loop" 2>/dev/null; loop_pid=""
  TOTAL=$(grep -c . "$work/admissions")
  FAILED=$(grep -c '^FAILED' "$work/admissions")
  kvc_log "handover ($how): Lease to the other replica ${LEASE_S}s, a new Binding reconciled ${RECONCILE_S}s after the holder ended (by $LEADER); $FAILED of $TOTAL admissions failed meanwhile"
  grep '^FAILED' "$work/admissions" | head -3 >&2
}

handover delete b2
lease_seconds=$LEASE_S reconcile_seconds=$RECONCILE_S total=$TOTAL failed=$FAILED
kvc_assert_eq "no Pod admission failed during the graceful handover ($total made)" "0" "$failed"
kvc_assert_eq "the handover stays within the Lease duration + retry period (17 s)" "yes" \
  "$(awk -v s="$reconcile_seconds" 'BEGIN { print (s <= 17 ? "yes" : "no (" s "s)") }')"
# A killed holder cannot release the Lease. Its container comes back within seconds and resumes
# the Lease under the same identity; were it gone for good, the standby would take the Lease
# once it had not seen it change for the lease duration (15 s), at the next retry (2 s). Either
# way the controllers must run again within that bound. Failed admissions are reported: calls
# the API server sent to the dead replica before its endpoint left the Service.
handover kill b3
kill_reconcile=$RECONCILE_S kill_leader=$LEADER kill_total=$TOTAL kill_failed=$FAILED
kvc_assert_eq "after a SIGKILL of the holder the controllers run again within 15 s + 2 s + 2 s" "yes" \
  "$(awk -v s="$kill_reconcile" 'BEGIN { print (s <= 19 ? "yes" : "no (" s "s)") }')"

kvc_assert_eq "no API call of the operator was forbidden (its ClusterRole and Role suffice)" "" \
  "$(kubectl -n "$sys" logs -l app.kubernetes.io/name=kvcache-operator --tail=-1 --prefix 2>&1 | grep -iE 'forbidden|\b403\b' | head -5)"

kvc_assert_ok "scaling the operator to 0 replicas" kubectl -n "$sys" scale deploy/kvcache-operator --replicas=0
kvc_wait_for 60 "no operator Pod is left" \
  bash -c "[ -z \"\$(kubectl -n $sys get pods -l app.kubernetes.io/name=kvcache-operator -o name)\" ]"
kvc_assert_refused "with no replica, an opted-in Pod is refused (fail closed)" "failed calling webhook" \
  bash -c "$(declare -f pod_yaml); pod_yaml chat-1 | kubectl -n '$ns' create --dry-run=server -f -"
kvc_assert_ok "and an UPDATE of an injected Pod is admitted (the freeze fails open)" \
  kubectl -n "$ns" label pod chat-0 touched=yes
kvc_assert_ok "scaling back to 2" kubectl -n "$sys" scale deploy/kvcache-operator --replicas=2
kvc_assert_ok "the replicas come back" kubectl -n "$sys" rollout status deploy/kvcache-operator --timeout=120s
kvc_wait_for 60 "the webhooks answer again" webhook_answers

# The uninstall as docs/install.md gives it: every object of our kinds first (this test's and any
# other left in the cluster, which the operator has since taken in hand), while the operator can
# still release their finalizers; then the install.
# (A Binding waits for the Pods that use it, Releasable=False/HeldByWorkloads: this test's
# namespace, Pods and Bindings, goes first.)
kvc_assert_ok "this test's namespace is deleted while the operator runs" \
  kubectl delete namespace "$ns" --timeout=120s
kvc_assert_ok "then every other KVCachePoolBinding" \
  kubectl delete kvcachepoolbindings --all -A --timeout=120s
kvc_assert_ok "then every pool and backend" \
  kubectl delete kvcachepools,kvcachebackends --all --timeout=120s
t_un=$(now)
kvc_assert_ok "kubectl delete -k uninstalls" kubectl delete -k "$work/overlay" --wait=true --timeout=240s
kvc_log "uninstall took $(since "$t_un")s"
free_ns=$(kvc_fresh_namespace after-uninstall)
kvc_assert_ok "after the uninstall a labelled Pod is not blocked" \
  bash -c "$(declare -f pod_yaml); pod_yaml chat-2 | kubectl -n '$free_ns' create -f -"
kvc_assert_eq "no webhook configuration, CRD, RBAC object or namespace of ours is left" "" \
  "$(kubectl get mutatingwebhookconfiguration,validatingwebhookconfiguration,clusterrole,clusterrolebinding -o name 2>/dev/null | grep -E 'gpustack-worker|kvcache-operator'; kubectl get crd -o name | grep worker.gpustack.ai; kubectl get namespace $sys -o name 2>/dev/null)"

# What the shared cluster had before: gpustack-system (its Pods on the real nodes) and the CRDs.
kubectl create namespace "$sys" >/dev/null && kubectl annotate namespace "$sys" scheduler.alpha.kubernetes.io/node-selector=type=real >/dev/null
bash "$root/test/cluster/fixture.sh" crds "$KVC_CLUSTER_DIR" >/dev/null
kvc_log "figures: install ${install_seconds}s; Pod deleted: Lease ${lease_seconds}s, reconcile ${reconcile_seconds}s, $failed of $total admissions failed; container killed: reconcile ${kill_reconcile}s by $kill_leader, $kill_failed of $kill_total admissions failed"
kvc_done
