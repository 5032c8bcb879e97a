#!/usr/bin/env bash
# The install a user does, on the real nodes: build the operator image, `kubectl apply -k` the
# local overlay pinned to it, and then, through the operator's own Service, certificate and RBAC:
#   - the webhooks answer (timed from the apply), the caBundles hold the operator's CA;
#   - the controllers read a real store outside the cluster (on the bridge address) and report
#     the backend, pool and Binding Ready, and a labelled vLLM Pod is injected;
#   - no API call of the operator was forbidden (a verb missing from the ClusterRole fails here);
#   - deleting the Lease holder's Pod: the other replica takes the Lease and reconciles a new
#     Binding (timed), while Pods keep being admitted (every failure counted; the goal is zero);
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

kvc_log "the operator image (images/build.sh, cached by content), loaded into the real nodes"
images=$("$root/images/build.sh" --kvcache "$kvcache" operator) || { echo "FAIL: images/build.sh"; exit 1; }
eval "$images"
"$root/test/cluster/cluster.sh" load "$KVC_CLUSTER_DIR" "$KVC_IMAGE_OPERATOR_ARCHIVE" >/dev/null \
  || { echo "FAIL: cluster.sh load"; exit 1; }

# The local overlay, pinned to this very build (its content tag) the way scripts/run.sh does it.
mkdir -p "$work/overlay"
cat >"$work/overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
sortOptions: {order: fifo}
resources: [$(realpath --relative-to="$work/overlay" "$root/deploy/overlays/local")]
images: [{name: kvcache-operator/kvcache, newTag: "${KVC_IMAGE_OPERATOR_PINNED##*:}"}]
EOF

kvc_log "a real store outside the cluster, listening on the bridge address $KVC_HOST_ADDRESS"
KVC_STORE_HOST=$KVC_HOST_ADDRESS "$root/test/store/store.sh" up "$store" >"$work/store.log" 2>&1 \
  || { tail -20 "$work/store.log"; echo "FAIL: store.sh up"; exit 1; }
# shellcheck disable=SC1091
. "$store/env"

ns=$(kvc_fresh_namespace install)
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

kvc_assert_ok "an external backend on that store, a pool and a Binding are created" kubectl apply -f - <<YAML
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
---
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: b1, namespace: $ns}
spec:
  poolRef: {name: install-pool}
  quota: {ceiling: 256Mi}
  domain: {name: install-b1, blockSize: 64, dtype: bfloat16}
YAML
kvc_assert_ok "the backend and the pool are Ready (read from the store by the in-cluster operator)" \
  kubectl wait --for=jsonpath='{.status.phase}'=Ready --timeout=120s kvcb/install-dram kvcp/install-pool
kvc_assert_ok "the Binding's quota is granted" kubectl -n "$ns" wait --for=condition=QuotaGranted --timeout=60s kvcpb/b1
pod_yaml() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: b1, kvcache.gpustack.ai/engine: vLLM}
spec:
  containers:
  - name: server
    image: vllm/vllm-openai:v0.29.0
    command: [vllm]
    args: [serve, --model, Qwen/Qwen3-8B]
YAML
}
kvc_assert_ok "a labelled vLLM Pod is admitted" bash -c "$(declare -f pod_yaml); pod_yaml chat-0 | kubectl -n '$ns' create -f -"
kvc_assert_contains "and injected with the store's client configuration" "$KVC_STORE_RPC" \
  "$(kubectl -n "$ns" get pod chat-0 -o jsonpath='{.metadata.annotations.kvcache\.gpustack\.ai/client-config}')"

# The Lease handover while Pods are admitted all along.
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
loop_pid=$!
sleep 2
t_delete=$(now)
kubectl -n "$sys" delete pod "$holder" --wait=false >/dev/null
new_holder() {
  local h; h=$(kubectl -n "$sys" get lease kvcache-operator -o jsonpath='{.spec.holderIdentity}')
  [ -n "$h" ] && [ "$h" != "$holder" ]
}
kvc_wait_for 30 "another replica takes the Lease" new_holder
lease_seconds=$(since "$t_delete")
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: b2}
spec:
  poolRef: {name: install-pool}
  quota: {ceiling: 128Mi}
  domain: {name: install-b2, blockSize: 64, dtype: bfloat16}
YAML
kvc_assert_ok "the new leader reconciles a Binding created after the deletion" \
  kubectl -n "$ns" wait --for=condition=QuotaGranted --timeout=60s kvcpb/b2
reconcile_seconds=$(since "$t_delete")
kvc_assert_ok "the Deployment is back to 2 ready replicas" \
  kubectl -n "$sys" rollout status deploy/kvcache-operator --timeout=120s
sleep 2
kill "$loop_pid" 2>/dev/null; wait "$loop_pid" 2>/dev/null; loop_pid=""
total=$(grep -c . "$work/admissions")
failed=$(grep -c '^FAILED' "$work/admissions")
kvc_log "handover: Lease moved ${lease_seconds}s and a new Binding was reconciled ${reconcile_seconds}s after the holder's Pod was deleted (bound: lease duration 15s + retry 2s); $failed of $total admissions failed meanwhile"
grep '^FAILED' "$work/admissions" | head -3 >&2
kvc_assert_eq "no Pod admission failed during the handover ($total made)" "0" "$failed"
kvc_assert_eq "the handover stays within the Lease duration + retry period (17 s)" "yes" \
  "$(awk -v s="$reconcile_seconds" 'BEGIN { print (s <= 17 ? "yes" : "no (" s "s)") }')"

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

# The uninstall as docs/install.md gives it: our objects first, while the operator can still
# release their finalizers, then the install.
kvc_assert_ok "the objects of our kinds are deleted while the operator runs" \
  kubectl delete namespace "$ns" --timeout=120s
kvc_assert_ok "the pool and the backend go too" \
  kubectl delete kvcachepool/install-pool kvcachebackend/install-dram --timeout=60s
t_un=$(now)
kvc_assert_ok "kubectl delete -k uninstalls" kubectl delete -k "$work/overlay" --wait=true --timeout=240s
kvc_log "uninstall took $(since "$t_un")s"
free_ns=$(kvc_fresh_namespace after-uninstall)
kvc_assert_ok "after the uninstall a labelled Pod is not blocked" \
  bash -c "$(declare -f pod_yaml); pod_yaml chat-2 | kubectl -n '$free_ns' create -f -"
kvc_assert_eq "no webhook configuration, CRD, RBAC object or namespace of ours is left" "" \
  "$(kubectl get mutatingwebhookconfiguration,validatingwebhookconfiguration,clusterrole,clusterrolebinding -o name 2>/dev/null | grep -E 'gpustack-worker|kvcache-operator'; kubectl get crd -o name | grep worker.gpustack.ai; kubectl get namespace $sys -o name 2>/dev/null)"

# What the shared cluster had before: gpustack-system (opted in to the real nodes) and the CRDs.
kubectl create namespace "$sys" >/dev/null && kubectl annotate namespace "$sys" scheduler.alpha.kubernetes.io/node-selector= >/dev/null
bash "$root/test/cluster/fixture.sh" crds "$KVC_CLUSTER_DIR" >/dev/null
kvc_log "figures: install ${install_seconds}s, Lease handover ${lease_seconds}s, reconcile after handover ${reconcile_seconds}s, admissions during handover $total (failed $failed)"
kvc_done
