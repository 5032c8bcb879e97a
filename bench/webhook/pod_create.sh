#!/usr/bin/env bash
# Pod creation through the real API server with the injection webhook vs without the label:
# p50/p99 over CREATES creates of each, interleaved (default 500). Needs a running control plane
# with the operator's webhooks registered: run scripts/run.sh first (it leaves both running), or
# point KVC_CLUSTER_DIR and KVC_OPERATOR_DIR at a test run's.
#
# The labelled Pods name a Binding in the bench's namespace: on the demo's pool shared-dram
# (reconciled by the controllers: the ledger really holds its domain), or, on a test cluster, the
# canary pool (KVC_BENCH_POOL=kvcache-canary).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KVC_BUILD_DIR:-$root/build}
creates=${1:-500}
demo=${KVC_DEMO_DIR:-${KVC_CACHE_DIR:-$HOME/.cache/kvcache-operator}/demo}
cluster=${KVC_CLUSTER_DIR:-$demo/cluster}
# shellcheck disable=SC1091
. "$cluster/env"
cmake --build "$build" --target bench_pod_create >/dev/null
# A previous run's namespace still being torn down (its Pods deleted one by one by the namespace
# controller) would load the API server during this one: wait for it to be gone first.
for _ in $(seq 300); do
  kubectl get namespaces --no-headers 2>/dev/null | grep -q '^bench-' || break
  sleep 1
done
# Nor may the aftermath of one (the scheduler's rate-limited Events for a deleted namespace's
# Pods, retried for minutes at ~40 requests/s): wait until the API server serves fewer than 10
# requests/s over 5 s, at most 5 minutes.
requests() {
  kubectl get --raw /metrics 2>/dev/null |
    awk '/^apiserver_request_total\{/ && $0 !~ /verb="WATCH"/ {n += $NF} END {printf "%d\n", n}'
}
for _ in $(seq 60); do
  before=$(requests)
  sleep 5
  [ $(( $(requests) - before )) -lt 50 ] && break
done
ns=bench-$(date +%s)
kubectl create namespace "$ns" >/dev/null
trap 'kubectl delete namespace "$ns" --wait=false >/dev/null' EXIT
for _ in $(seq 30); do kubectl -n "$ns" get sa default >/dev/null 2>&1 && break; sleep 1; done
pool=${KVC_BENCH_POOL:-shared-dram}
kubectl apply -f - >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: bench, namespace: $ns}
spec:
  poolRef: {name: $pool}
  quota: {ceiling: 16Mi}
  domain: {name: $ns, blockSize: 16, dtype: bfloat16}
YAML
# The Binding must be in the webhook's cache before the first create (a miss costs a live read).
kubectl -n "$ns" wait --for=jsonpath='{.metadata.finalizers}' --timeout=30s kvcpb/bench >/dev/null 2>&1 ||
  sleep 2
"$build/bench/webhook/bench_pod_create" "$KUBECONFIG" "$ns" bench "$creates"
