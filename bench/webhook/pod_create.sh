#!/usr/bin/env bash
# Pod creation through the real API server with the injection webhook vs without the label:
# p50/p99 over CREATES creates of each, interleaved (default 500). Needs a running control plane
# with the operator's webhooks registered: run scripts/run.sh first (it leaves both running), or
# point KVC_CLUSTER_DIR and KVC_OPERATOR_DIR at a test run's.
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
ns=bench-$(date +%s)
kubectl create namespace "$ns" >/dev/null
trap 'kubectl delete namespace "$ns" --wait=false >/dev/null' EXIT
for _ in $(seq 30); do kubectl -n "$ns" get sa default >/dev/null 2>&1 && break; sleep 1; done
. "$root/test/webhook/lib.sh"
kvc_canary_binding "$ns"
"$build/bench/webhook/bench_pod_create" "$KUBECONFIG" "$ns" canary "$creates"
