#!/usr/bin/env bash
# The main job on its embedded default: a local Kubernetes control plane (built from Go modules),
# a real Mooncake store (master + 2 members from the PyPI wheel) and `kvcache operator` serving
# its admission webhooks, all on 127.0.0.1. It creates a store/pool/grant, submits a vLLM Pod, an
# SGLang Pod and one that is refused, prints what happened, and leaves everything running.
#
# Usage: scripts/run.sh          set up (first run builds the control plane: ~10 min), run the demo
#        scripts/run.sh down     tear it all down
# State lives in $KVC_DEMO_DIR (default ~/.cache/kvcache-operator/demo).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KVC_BUILD_DIR:-$root/build}
demo=${KVC_DEMO_DIR:-${KVC_CACHE_DIR:-$HOME/.cache/kvcache-operator}/demo}
export KVC_CLUSTER_DIR=$demo/cluster

banner() { printf '\n\033[1m=== %s\033[0m\n' "$*"; }

if [ "${1:-}" = down ]; then
  "$root/test/webhook/operator.sh" down "$demo/operator" || true
  "$root/test/store/store.sh" down "$demo/store" || true
  "$root/test/cluster/cluster.sh" down "$KVC_CLUSTER_DIR" || true
  echo "demo stopped; its logs are in $demo"
  exit 0
fi

banner "setting up this machine (Debian packages, control plane binaries, Mooncake wheel)"
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja >/dev/null
cmake --build "$build" -j "$(nproc)" --target kvcache
kvcache=$build/src/cmd/kvcache

banner "a local control plane: etcd, kube-apiserver, controller-manager, scheduler, kwok"
"$root/test/cluster/cluster.sh" up "$KVC_CLUSTER_DIR"
# shellcheck disable=SC1091
. "$KVC_CLUSTER_DIR/env"
kubectl apply --server-side --force-conflicts -f "$root/deploy/crds" >/dev/null
kubectl wait --for=condition=Established --timeout=60s crd --all >/dev/null

banner "a real Mooncake store: one master (multi-tenant) and two members of 256 MiB"
"$root/test/store/store.sh" up "$demo/store"
# shellcheck disable=SC1091
. "$demo/store/env"
"$kvcache" store status --admin "$KVC_STORE_ADMIN" || true

banner "kvcache operator, its webhooks registered with the API server"
KVC_OPERATOR_WATCH_NAMESPACE="" "$root/test/webhook/operator.sh" up "$kvcache" "$demo/operator"

banner "KVCacheBackend demo-store -> KVCachePool demo-pool -> KVCachePoolBinding demo/team-a"
kubectl create namespace demo --dry-run=client -o yaml | kubectl apply -f - >/dev/null
sed -e "s/@RPC@/$KVC_STORE_RPC/g" -e "s/@ADMIN@/$KVC_STORE_ADMIN/g" \
  "$root/examples/demo/cluster.yaml.in" >"$demo/cluster.yaml"
"$root/test/webhook/apply-with-status.sh" "$demo/cluster.yaml"
# Register the Binding's reuse domain in the master's tenant ledger, as the pool controller does.
curl -sf -X PUT -H 'Content-Type: application/json' \
  -d '{"requested_quota_bytes": 268435456}' \
  "http://$KVC_STORE_ADMIN/api/v1/tenant_quotas?tenant_id=team-a-chat" >/dev/null
kubectl get kvcb demo-store && kubectl get kvcp demo-pool && kubectl -n demo get kvcpb
"$kvcache" store status --admin "$KVC_STORE_ADMIN" | sed -n '/TENANT LEDGER/,$p'

banner "submitting a vLLM Pod, an SGLang Pod and a Pod launched through bash -lc"
kubectl -n demo delete pod --all --wait=false >/dev/null 2>&1 || true
kubectl create -f "$root/examples/demo/pods.yaml" 2>"$demo/refused.txt" || true

banner "vllm-chat: what the webhook wrote"
kubectl -n demo get pod vllm-chat -o json | jq '{
  injected: (.metadata.annotations["kvcache.gpustack.ai/injected"] | fromjson),
  "client-config (projected to /etc/gpustack/kvcache/mooncake.json)":
    (.metadata.annotations["kvcache.gpustack.ai/client-config"] | fromjson),
  args: .spec.containers[0].args,
  env: [.spec.containers[0].env[] | {(.name): (if .valueFrom then "fieldRef " + .valueFrom.fieldRef.fieldPath else (.value // "") end)}] | add,
  volume: [.spec.volumes[] | select(.name == "gpustack-kvcache-config")][0]}'

banner "sglang-chat: what the webhook wrote"
kubectl -n demo get pod sglang-chat -o json | jq '{
  injected: (.metadata.annotations["kvcache.gpustack.ai/injected"] | fromjson),
  args: .spec.containers[0].args,
  env: [.spec.containers[0].env[] | {(.name): (if .valueFrom then "fieldRef " + .valueFrom.fieldRef.fieldPath else (.value // "") end)}] | add}'

banner "vllm-scripted: refused at admission, with the fix"
cat "$demo/refused.txt"
kubectl -n demo get pods -o wide

banner "left running"
cat <<TXT
  export KUBECONFIG=$KUBECONFIG
  kubectl -n demo get pods                          # the injected Pods (kwok runs them)
  kubectl -n demo get events.events.k8s.io          # KVCacheInjected / KVCacheInjectionRefused
  $kvcache store status --admin $KVC_STORE_ADMIN
  $kvcache check-inject -f examples/demo/pods.yaml --cluster $demo/cluster.yaml
  scripts/run.sh down                               # tear it all down
TXT
