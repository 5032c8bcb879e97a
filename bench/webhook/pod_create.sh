#!/usr/bin/env bash
# Pod creation through the real API server with the injection webhook vs without the label:
# p50/p99 over CREATES creates of each, interleaved (default 500). Needs a running control plane
# with the operator's webhooks registered: run scripts/run.sh first (it leaves both running), or
# point KVC_CLUSTER_DIR and KVC_OPERATOR_DIR at a test run's (and KVC_BENCH_POOL=kvcache-canary).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
creates=${1:-500}
cmake --build "$build" --target bench_pod_create >/dev/null
bench_wait_quiet
bench_namespace
"$build/bench/webhook/bench_pod_create" "$KUBECONFIG" "$ns" bench "$creates"
