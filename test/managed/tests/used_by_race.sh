#!/usr/bin/env bash
# Thirty ModelDeployments attach to one Binding at once while the pool controller keeps rewriting
# that Binding's status (issue: faults with nothing lost, 2.7). The Binding's ceiling is switched
# between 128Mi and 192Mi every ~0.5 s throughout, so every pool pass writes its requestedQuota
# and effectiveQuota, racing the thirty ModelDeployment controllers' writes of status.usedBy.
#   - usedBy lists exactly the thirty, each once, and keeps them while the ceiling keeps moving;
#     sampled every ~0.2 s from the first attach on, no listed one is ever dropped;
#   - the Binding's deletion is held (Releasable=False/HeldByWorkloads) while any of them is
#     left: after twenty-nine are gone it still holds, naming the last; it goes with the last.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
b=used-by
n=30
churner=""
sampler=""
cleanup_race() {
  [ -n "$churner" ] && kill "$churner" 2>/dev/null
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
  if [ -n "${ns:-}" ]; then
    kubectl -n "$ns" delete md --all --timeout=180s >/dev/null 2>&1
    kubectl -n "$ns" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  fi
  kubectl delete kvcp used-by --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'cleanup_race; kvc_cleanup' EXIT
used_by() { kubectl -n "$ns" get kvcpb shared -o json 2>/dev/null | jq -r '[.status.usedBy[]?.name] | sort | join(" ")'; }
releasable() { kubectl -n "$ns" get kvcpb shared -o jsonpath='{.status.conditions[?(@.type=="Releasable")].status}/{.status.conditions[?(@.type=="Releasable")].reason}' 2>/dev/null; }
# deployment I: a ModelDeployment md-I on the Binding, one Server replica on a fake GPU node.
deployment() {
  cat <<YAML
---
apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata: {name: md-$1, namespace: $ns}
spec:
  model: {name: Qwen/Qwen2.5-7B-Instruct}
  engine: {name: vLLM, image: "gpustack/runner:cuda13.0-vllm0.29.0"}
  kvCache: {poolRef: {name: shared}}
  roles:
  - name: server
    replicas: 1
    resources: {accelerator: "1"}
YAML
}

kvc_assert_ok "a managed store" managed_backend $b 256Mi
kvc_wait_for 240 "it is Ready" kvcb_phase_is $b Ready
ns=$(kvc_fresh_namespace used-by)
kvc_assert_ok "a pool and the Binding shared" kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: used-by}
spec: {backends: [$b], quota: {total: 1Gi}}
---
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: shared, namespace: $ns}
spec:
  poolRef: {name: used-by}
  quota: {ceiling: 128Mi}
  domain: {name: used-by-shared, blockSize: 64, dtype: bfloat16}
YAML
kvc_wait_for 120 "it is granted" bash -c \
  "[ \"\$(kubectl -n $ns get kvcpb shared -o jsonpath='{.status.conditions[?(@.type==\"QuotaGranted\")].status}')\" = True ]"

# The pool controller rewrites the Binding's status all along.
(
  while :; do
    for c in 192Mi 128Mi; do
      kubectl -n "$ns" patch kvcpb shared --type=merge -p "{\"spec\":{\"quota\":{\"ceiling\":\"$c\"}}}" >/dev/null 2>&1
      sleep 0.5
    done
  done
) &
churner=$!
sleep 2
# usedBy sampled every ~0.2 s from now until the deletions: once listed, a ModelDeployment must
# stay listed (a status write from a stale read would drop it, and its controller would put it
# back a moment later: only the samples see that).
(while :; do echo "$(date +%s.%N) $(used_by)"; sleep 0.2; done) >"$KVC_CLEANUP_FILE.used-by" 2>/dev/null &
sampler=$!
t0=$SECONDS
all_deployments() { for i in $(seq 1 "$n"); do deployment "$i"; done | kubectl apply -f -; }
kvc_assert_ok "$n ModelDeployments on it, applied at once" all_deployments
want=$(for i in $(seq 1 $n); do echo "md-$i"; done | sort | paste -sd' ')
used_by_is_all() { [ "$(used_by)" = "$want" ]; }
kvc_wait_for 180 "usedBy lists exactly the $n" used_by_is_all
kvc_log "$n attached in $((SECONDS - t0))s; the ceiling moved $(kubectl -n "$ns" get kvcpb shared -o jsonpath='{.metadata.generation}') times in all"
sleep 10  # the ceiling keeps moving: nothing may drop out of usedBy meanwhile
kvc_assert_eq "and still exactly the $n after 10 s more of status writes" "$want" "$(used_by)"
kill "$churner"; wait "$churner" 2>/dev/null; churner=""
kill "$sampler"; wait "$sampler" 2>/dev/null; sampler=""
dropped=$(python3 - "$KVC_CLEANUP_FILE.used-by" <<'PY'
import sys
seen, drops = set(), []
for line in open(sys.argv[1]):
    t, *names = line.split()
    now = set(names)
    drops += [f"{n} at {t}" for n in sorted(seen - now)]
    seen |= now
print(f"{len(drops)} drop(s) in {sum(1 for _ in open(sys.argv[1]))} samples " + "; ".join(drops[:5]))
PY
)
kvc_log "usedBy samples: $dropped"
kvc_assert_contains "no sample lost a listed ModelDeployment while they attached and after" "0 drop(s)" "$dropped"
kvc_assert_eq "each listed once" "$n" "$(kubectl -n "$ns" get kvcpb shared -o json | jq '.status.usedBy | length')"

kvc_assert_ok "the Binding's deletion is accepted" kubectl -n "$ns" delete kvcpb shared --wait=false
kvc_wait_for 60 "and held: Releasable=False/HeldByWorkloads" bash -c "[ \"\$(kubectl -n $ns get kvcpb shared -o jsonpath='{.status.conditions[?(@.type==\"Releasable\")].status}/{.status.conditions[?(@.type==\"Releasable\")].reason}')\" = False/HeldByWorkloads ]"
all_but_last() { for i in $(seq 1 $((n - 1))); do echo "md-$i"; done | xargs kubectl -n "$ns" delete md --timeout=240s; }
kvc_assert_ok "twenty-nine of them are deleted" all_but_last
only_last() { [ "$(used_by)" = "md-$n" ]; }
kvc_wait_for 120 "usedBy names only the last" only_last
kvc_assert_eq "the Binding is still held" "False/HeldByWorkloads" "$(releasable)"
kvc_assert_contains "naming the last" "ModelDeployment/md-$n" \
  "$(kubectl -n "$ns" get kvcpb shared -o jsonpath='{.status.conditions[?(@.type=="Releasable")].message}')"
kvc_assert_ok "the last is deleted" kubectl -n "$ns" delete md "md-$n" --timeout=120s
kvc_wait_for 120 "then the Binding is released" bash -c "! kubectl -n $ns get kvcpb shared -o name 2>/dev/null | grep -q ."
kvc_done
