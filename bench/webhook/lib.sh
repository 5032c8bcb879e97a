# shellcheck shell=bash
# What the through-the-API-server webhook benches share: the cluster they run on, a quiet API
# server before they start, and a namespace with a Binding the labelled Pods name.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVC_BUILD_DIR:-$root/build}
demo=${KVC_DEMO_DIR:-${KVC_CACHE_DIR:-$HOME/.cache/kvcache-operator}/demo}
cluster=${KVC_CLUSTER_DIR:-$demo/cluster}
# shellcheck disable=SC1091
. "$cluster/env"

# bench_wait_quiet: no previous run's namespace is still being torn down (its Pods deleted one by
# one by the namespace controller would load the API server during this one), nor its aftermath
# (the scheduler's rate-limited Events for a deleted namespace's Pods, retried for minutes at ~40
# requests/s): wait until the API server serves fewer than 10 requests/s over 5 s, at most 5 min.
bench_wait_quiet() {
  local before
  for _ in $(seq 300); do
    kubectl get namespaces --no-headers 2>/dev/null | grep -q '^bench-' || break
    sleep 1
  done
  for _ in $(seq 60); do
    before=$(_bench_requests)
    sleep 5
    [ $(( $(_bench_requests) - before )) -lt 50 ] && break
  done
}
_bench_requests() {
  kubectl get --raw /metrics 2>/dev/null |
    awk '/^apiserver_request_total\{/ && $0 !~ /verb="WATCH"/ {n += $NF} END {printf "%d\n", n}'
}

# bench_namespace: a fresh namespace bench-<time> (deleted on exit) holding the Binding "bench" on
# the demo's pool shared-dram (reconciled by the controllers: the ledger really holds its
# domain) or, on a test cluster, the canary pool (KVC_BENCH_POOL=kvcache-canary); sets $ns.
bench_namespace() {
  ns=bench-$(date +%s)
  kubectl create namespace "$ns" >/dev/null
  trap 'kubectl delete namespace "$ns" --wait=false >/dev/null' EXIT
  for _ in $(seq 30); do kubectl -n "$ns" get sa default >/dev/null 2>&1 && break; sleep 1; done
  kubectl apply -f - >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: bench, namespace: $ns}
spec:
  poolRef: {name: ${KVC_BENCH_POOL:-shared-dram}}
  quota: {ceiling: 16Mi}
  domain: {name: $ns, blockSize: 16, dtype: bfloat16}
YAML
  # The Binding must be in the webhook's cache before the first create (a miss is a live read).
  kubectl -n "$ns" wait --for=jsonpath='{.metadata.finalizers}' --timeout=30s kvcpb/bench \
    >/dev/null 2>&1 || sleep 2
}
