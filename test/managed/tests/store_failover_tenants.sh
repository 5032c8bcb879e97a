#!/usr/bin/env bash
# A managed store's leader hard-killed with live tenants (issue: faults with nothing lost, 2.1).
# Step 1's backend with standbys (leader {replicas: 3}) on the real nodes, one pool and four
# Bindings in two namespaces, created after the standbys started (so their Pods' seeded policy
# copies lack them), and store clients writing through the configuration the webhook injected.
#   - the holder's processes are frozen and killed from the host and its Pod force-deleted (no
#     release of the Lease); while no master serves, one Binding is deleted and one created;
#   - test/managed/audit.py samples the API and the ledger every ~250 ms throughout and judges
#     the record against the model: no granted domain missing from the ledger or the policy
#     ConfigMap in any sample, no released domain back, finalizers kept, every opted-in Pod
#     injected, the ledger equal to the model within the failover plus one pass (10 s after the
#     new master answers) and never diverging after, and exactly the model at the end with each
#     Binding's effectiveQuota the master's grant;
#   - the writers of the Bindings that existed before the kill never get TENANT_NOT_REGISTERED
#     (-1701), none does in the 30 s after convergence, and their writes succeed again; a writer
#     of the Binding created in the window writes too.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
here=$(cd "$(dirname "$0")/.." && pwd)
b=mooncake-dram
recorder=""
cleanup_tenants() {
  [ -n "$recorder" ] && kill "$recorder" 2>/dev/null
  # What the pool controller decided around the fault, for the record.
  kubectl -n gpustack-system logs -l app.kubernetes.io/name=kvcache-operator --all-containers \
    --since=10m --prefix --tail=-1 2>/dev/null | grep -i "pool" | tail -40 >&2
  stop_writers
  # A domain that holds objects is not released (TENANT_NOT_EMPTY): empty the writers' tenants.
  for d in dom-1 dom-3 dom-5; do
    admin_curl $b "/api/v1/remove_all?force=true&tenant_id=$d" -X POST >/dev/null 2>&1
  done
  kvc_log "the ledger after the writers stopped and their objects were removed:" \
    "$(admin_curl $b /api/v1/tenant_quotas | jq -c '[.data[] | {tenant_id, charged_bytes}]')"
  for ns in "${ns1:-}" "${ns2:-}"; do
    [ -n "$ns" ] || continue
    kubectl -n "$ns" delete kvcpb --all --timeout=90s >/dev/null 2>&1 && continue
    # Still held (a charge the master keeps for a client's unfinished put): log why, then take
    # the documented escape, the finalizer removed by hand, so that the suite goes on.
    kubectl -n "$ns" get kvcpb -o json | jq -r '.items[] | "\(.metadata.name): \(.status.conditions[]? | select(.type == "Releasable") | .message)"' >&2
    kubectl -n "$ns" get kvcpb -o name | xargs -r -I{} kubectl -n "$ns" patch {} --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
  done
  kubectl delete kvcp tenants --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'cleanup_tenants; kvc_cleanup' EXIT
now() { date +%s.%N; }
holder() { kubectl -n gpustack-system get lease $b-leader -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }

# binding NS NAME DOMAIN CEILING
binding() { pool_binding "$1" tenants "$2" "$4" "$3"; }
granted() { binding_granted "$@"; }

# writer NS NAME BINDING: a store client on a real node, opted in with the Binding (the webhook
# writes its configuration; it declares that its launcher forwards arguments, as python3 -c
# ignores the engine flags appended to it), putting a 64 KiB object every 200 ms and printing
# one JSON line a put: {"t": <time>, "put": <rc>}.
writer() {
  injected_store_pod "$1" "$2" "$3" "$store_image" "print(json.dumps({'t': round(time.time(), 3), 'setup': rc, 'tenant': config['tenant_id']}), flush=True)
if rc != 0:
    sys.exit(1)
i = 0
while not os.path.exists('/tmp/stop'):
    i += 1
    t = time.time()
    rc = store.put(f'w-{i}', b'w' * 65536)
    print(json.dumps({'t': round(t, 3), 'put': rc}), flush=True)
    time.sleep(0.2)
store.close()"
}
# puts NS POD FROM TO [RC]: the puts of the writer started in [FROM, TO) (with return code RC).
# stop_writers: each writer finishes its put, closes its client and exits (the file /tmp/stop);
# a client killed mid-put leaves a charge on its tenant that holds the Binding's release.
stop_writers() {
  local ns pod
  for ns in "${ns1:-}" "${ns2:-}"; do
    [ -n "$ns" ] || continue
    for pod in $(kubectl -n "$ns" get pods -o name 2>/dev/null); do
      kubectl -n "$ns" exec "${pod#pod/}" -- python3 -c 'open("/tmp/stop", "w")' >/dev/null 2>&1
    done
  done
  for _ in $(seq 1 30); do
    [ -z "$(for ns in "${ns1:-}" "${ns2:-}"; do [ -n "$ns" ] && kubectl -n "$ns" get pods \
      --field-selector=status.phase=Running -o name 2>/dev/null; done)" ] && break
    sleep 1
  done
  for ns in "${ns1:-}" "${ns2:-}"; do
    [ -n "$ns" ] && kubectl -n "$ns" delete pods --all --grace-period=0 --force >/dev/null 2>&1
  done
}
# (The client's own log lines are not JSON: skipped.)
puts() {
  kubectl -n "$1" logs "$2" 2>/dev/null | jq -Rr --argjson from "$3" --argjson to "$4" --arg rc "${5:-}" \
    'fromjson? | select(.put != null and .t >= $from and .t < $to and ($rc == "" or (.put | tostring) == $rc)) | .put' |
    wc -l
}

kvc_assert_ok "Step 1's backend with standbys (leader.replicas 3)" managed_backend $b 512Mi '{replicas: 3}'
kvc_wait_for 300 "it is Ready, 3 desired / 1 ready" bash -c "
  [ \"\$(kubectl get kvcb $b -o jsonpath='{.status.phase}')\" = Ready ] &&
  [ \"\$(kubectl -n gpustack-system get deploy $b-leader -o jsonpath='{.spec.replicas}/{.status.replicas}/{.status.readyReplicas}')\" = 3/3/1 ]"
store_image=$(kubectl -n gpustack-system get configmap gpustack-settings -o jsonpath='{.data.kv-cache-backend-image}')
ns1=$(kvc_real_nodes_namespace tenants-1)
ns2=$(kvc_real_nodes_namespace tenants-2)
kvc_assert_ok "a pool of 1Gi on it" kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: tenants}
spec: {backends: [$b], quota: {total: 1Gi}}
YAML
four_bindings() {
  binding "$ns1" b1 dom-1 128Mi && binding "$ns1" b2 dom-2 64Mi &&
    binding "$ns2" b3 dom-3 192Mi && binding "$ns2" b4 dom-4 96Mi
}
kvc_assert_ok "four Bindings in two namespaces, after the standbys started" four_bindings
for pair in "$ns1 b1" "$ns1 b2" "$ns2 b3" "$ns2 b4"; do
  kvc_wait_for 120 "Binding ${pair#* } is granted" granted $pair
done
kvc_assert_ok "a writer of b1 starts (injected by the webhook)" writer "$ns1" w1 b1
kvc_assert_ok "a writer of b3 starts" writer "$ns2" w3 b3
kvc_wait_for 180 "both are writing" bash -c \
  "[ \"\$(kubectl -n $ns1 logs w1 2>/dev/null | grep -c '\"put\": 0')\" -gt 2 ] && [ \"\$(kubectl -n $ns2 logs w3 2>/dev/null | grep -c '\"put\": 0')\" -gt 2 ]"
kvc_assert_eq "the ledger holds the four domains at their ceilings" \
  "dom-1=134217728 dom-2=67108864 dom-3=201326592 dom-4=100663296" \
  "$(admin_curl $b /api/v1/tenant_quotas | jq -r '[.data[] | "\(.tenant_id)=\(.requested_quota_bytes)"] | sort | join(" ")')"

mkdir -p "$KVC_MANAGED_DIR"
record=$KVC_MANAGED_DIR/audit-store_failover_tenants.jsonl
: >"$record"
python3 "$here/audit.py" record --backend $b --out "$record" --tls-dir "$(admin_tls_dir)" &
recorder=$!
sleep 3  # a few samples of the steady state

# --- the fault ---------------------------------------------------------------------------------
old=$(holder)
t0=$(now)
kvc_assert_ok "the holder's processes are frozen ($old)" signal_pod_processes "$old" STOP
kubectl -n gpustack-system delete pod "$old" --grace-period=0 --force >/dev/null 2>&1
signal_pod_processes "$old" KILL
kvc_assert_ok "in the window: Binding b2 is deleted" kubectl -n "$ns1" delete kvcpb b2 --wait=false
kvc_assert_ok "in the window: Binding b5 is created" binding "$ns2" b5 dom-5 32Mi
window=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
kvc_log "the deletion and the creation were made ${window}s after the kill"
serving=""
converged=""
want="dom-1=134217728 dom-3=201326592 dom-4=100663296 dom-5=33554432"
for _ in $(seq 1 600); do
  if [ -z "$serving" ] && master_serves $b && [ "$(holder)" != "$old" ]; then
    serving=$(now)
  fi
  if [ -n "$serving" ] && [ "$(admin_curl $b /api/v1/tenant_quotas 2>/dev/null |
      jq -r '[.data[] | "\(.tenant_id)=\(.requested_quota_bytes)"] | sort | join(" ")')" = "$want" ]; then
    converged=$(now)
    break
  fi
  sleep 0.1
done
kvc_assert_ok "a new holder's master serves" test -n "$serving"
kvc_assert_ok "its ledger reaches the model: b2's domain released, b5's registered" test -n "$converged"
kvc_log "after the kill: serving ${serving:+$(awk -v a="$t0" -v b="$serving" 'BEGIN { printf "%.1f", b - a }')}s," \
  "ledger equal to the model ${converged:+$(awk -v a="$t0" -v b="$converged" 'BEGIN { printf "%.1f", b - a }')}s"
kvc_wait_for 60 "Binding b2 is gone (released)" bash -c "! kubectl -n $ns1 get kvcpb b2 -o name 2>/dev/null | grep -q ."
kvc_wait_for 60 "Binding b5 is granted" granted "$ns2" b5
kvc_assert_ok "a writer of b5 starts" writer "$ns2" w5 b5
kvc_wait_for 120 "it writes" bash -c "[ \"\$(kubectl -n $ns2 logs w5 2>/dev/null | grep -c '\"put\": 0')\" -gt 2 ]"
quiet_from=${converged:-$(now)}
# 30 s of writes after convergence.
while awk -v a="$quiet_from" -v b="$(now)" 'BEGIN { exit !(b - a < 31) }'; do sleep 1; done
kill "$recorder"; wait "$recorder" 2>/dev/null; recorder=""
end=$(now)

# --- what must hold --------------------------------------------------------------------------
for w in "$ns1 w1" "$ns2 w3"; do
  kvc_assert_eq "writer ${w#* }: no TENANT_NOT_REGISTERED (-1701) at any time" 0 "$(puts $w 0 "$end" -1701)"
  kvc_assert_eq "writer ${w#* }: none in the 30 s after convergence" 0 "$(puts $w "$quiet_from" "$end" -1701)"
  ok=$(puts $w "$quiet_from" "$end" 0)
  kvc_log "writer ${w#* }: $ok successful puts in the 30 s after convergence; failures during the fault:" \
    "$(kubectl -n "${w% *}" logs "${w#* }" | jq -Rr --argjson a "$t0" --argjson b "$quiet_from" 'fromjson? | select(.put != null and .put != 0 and .t >= $a and .t < $b) | .put' | sort | uniq -c | tr '\n' ' ')"
  kvc_assert_ok "writer ${w#* }: its writes succeed again after the failover" test "$ok" -gt 10
done
kvc_assert_eq "writer w5 (Binding created in the window): no TENANT_NOT_REGISTERED" 0 "$(puts "$ns2" w5 0 "$end" -1701)"
audit=$(python3 "$here/audit.py" check "$record" --converge-within 10 --final 2>&1)
kvc_log "$audit"
kvc_assert_contains "the audit finds no violation in any sample (during the fault included)" "0 violation(s)" "$audit"
kvc_done
