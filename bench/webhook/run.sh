#!/usr/bin/env bash
# The webhook server alone (DESIGN.md §6: >= 10,000 AdmissionReviews/s on 2 cores over TLS
# keep-alive; p99 <= 2 ms at 1,000/s). Drives bench_webhook_server with wrk and reports each
# figure next to the baseline measured in the same run: GET /healthz through the same TLS server.
#
# Usage: bench/webhook/run.sh [BUILD_DIR]   (needs wrk and openssl; scripts/setup.sh installs them)
set -euo pipefail
# shellcheck source=server_lib.sh
. "$(dirname "$0")/server_lib.sh"
build=${1:-$root/build}
start_bench_server "$build"
url=https://127.0.0.1:$port

# An AdmissionReview for the typical vLLM Pod of examples/inject/workloads.yaml.
python3 - "$root/examples/inject/workloads.yaml" >"$work/review.json" <<'PY'
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
pod = next(d for d in docs if d["kind"] == "Pod" and d["metadata"]["name"] == "sglang-bench")
print(json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
  "request": {"uid": "bench", "kind": {"group": "", "version": "v1", "kind": "Pod"},
  "resource": {"group": "", "version": "v1", "resource": "pods"}, "operation": "CREATE",
  "namespace": "team-a", "name": pod["metadata"]["name"], "object": pod}}))
PY
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = io.open("$work/review.json"):read("a")
LUA
cat >"$work/paced.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = io.open("$work/review.json"):read("a")
function delay() return 4 end  -- 4 connections x one request per ~4 ms = ~1,000 reviews/s
LUA

measure() {  # measure KEY LABEL WRK-ARGS...
  local key=$1 label=$2
  shift 2
  wrk --latency "$@" >"$work/out" 2>&1
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/out")
  p50=$(awk '$1 == "50%" {print $2}' "$work/out")
  p99=$(awk '$1 == "99%" {print $2}' "$work/out")
  printf '%-44s %12s %10s %10s\n' "$label" "$rps" "$p50" "$p99"
  echo "$rps" >"$work/rps-$key"
}

printf '%-44s %12s %10s %10s\n' "run (2 server threads, wrk 2 threads)" "requests/s" "p50" "p99"
measure baseline "baseline: GET /healthz, 16 connections" -t2 -c16 -d10s "$url/healthz"
measure review "AdmissionReview (SGLang Pod), 16 connections" -t2 -c16 -d10s -s "$work/post.lua" \
  "$url/mutate-gpustack-worker-kvcache-core-v1-pod"
measure paced "AdmissionReview paced at ~1,000/s" -t2 -c4 -d10s -s "$work/paced.lua" \
  "$url/mutate-gpustack-worker-kvcache-core-v1-pod"
base=$(cat "$work/rps-baseline")
review=$(cat "$work/rps-review")
awk -v a="$review" -v b="$base" 'BEGIN {printf "reviews/s as a share of the /healthz baseline: %.2f\n", a / b}'
