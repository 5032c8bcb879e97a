#!/usr/bin/env bash
# A hung master does not hold up the pools of a healthy one (issue: faults with nothing lost,
# 2.5). Two real stores outside the cluster (on the bridge address), each an external backend:
# three pools on the one to hang, one on the healthy one, a Binding on each. The first master is
# then stopped (SIGSTOP: its kernel still accepts connections, nothing answers) while the hung
# pools' Bindings keep changing, so their passes keep coming:
#   - a Binding created on the healthy pool is granted in the healthy master's ledger within
#     10 s, every time (four, ~4 s apart);
#   - the hung pools report QuotaLedgerAvailable=False/LedgerUnreachable;
#   - once the master answers again, its ledger holds every hung Binding's last ceiling.
# The operator's pool controller runs two workers: before the fix, both ended up waiting on the
# hung master (one in its request deadline, the other for the master's lock) and the healthy
# pool waited 15.9-17.3 s for each Binding (broken on purpose: a blocking lock and the scrape after an
# unanswered ledger read); with the fix, under 0.5 s.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=$KVC_CLEANUP_FILE.d/hung
mkdir -p "$work"
hung_pools=(hung-a hung-b hung-c)
churner=""
hung_pid=""
cleanup_hung() {
  [ -n "$churner" ] && kill "$churner" 2>/dev/null
  [ -n "$hung_pid" ] && kill -CONT "$hung_pid" 2>/dev/null
  [ -n "${ns:-}" ] && kubectl -n "$ns" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  kubectl delete kvcp "${hung_pools[@]}" healthy --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend kvc-hung
  delete_backend kvc-healthy
  "$root/test/store/store.sh" down "$work/hung" >/dev/null 2>&1
  "$root/test/store/store.sh" down "$work/healthy" >/dev/null 2>&1
}
trap 'cleanup_hung; kvc_cleanup' EXIT

# store NAME: a real store on the bridge address (one member), its env sourced as NAME_*.
store() {
  KVC_STORE_HOST=$KVC_HOST_ADDRESS KVC_STORE_MEMBERS=1 "$root/test/store/store.sh" up "$work/$1" \
    >"$work/$1.log" 2>&1 || { tail -20 "$work/$1.log"; return 1; }
}
store_env() { (. "$work/$1/env" && eval "echo \$$2"); }
backend() { external_backend "$1" "$(store_env "$2" KVC_STORE_RPC)" "$(store_env "$2" KVC_STORE_ADMIN)"; } # NAME STORE
pool_and_binding() { # pool_and_binding POOL BACKEND TOTAL CEILING (domain dom-POOL)
  kubectl apply -f - <<YAML && pool_binding "$ns" "$1" "$1" "$4" "dom-$1"
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: $1}
spec: {backends: [$2], quota: {total: $3}}
YAML
}
binding_on() { pool_binding "$ns" "$1" "$2" 16Mi "dom-$2"; } # POOL NAME (domain dom-NAME)
granted() { binding_granted "$ns" "$1"; }
# ledger STORE: "domain bytes" lines of the master's ledger, sorted.
ledger() {
  curl -sf --max-time 5 "http://$(store_env "$1" KVC_STORE_ADMIN)/api/v1/tenant_quotas" |
    jq -r '.data[] | "\(.tenant_id) \(.requested_quota_bytes)"' | sort
}
in_ledger() { ledger "$1" | grep -q "^dom-$2 "; }
# seconds_until_granted NAME T0: polls (every 0.2 s, up to 30 s) until Binding NAME is granted and
# its domain is in the healthy master's ledger; prints the seconds since T0 (date +%s.%N) when
# that was seen, fails after 30.
seconds_until_granted() {
  local took
  while :; do
    if granted "$1" && in_ledger healthy "$1"; then
      echo "$(date +%s.%N) - $2" | bc; return 0
    fi
    took=$(echo "$(date +%s.%N) - $2" | bc)
    [ "$(echo "$took > 30" | bc)" = 1 ] && return 1
    sleep 0.2
  done
}
ledger_unreachable() {
  [ "$(kubectl get kvcp "$1" -o jsonpath='{.status.conditions[?(@.type=="QuotaLedgerAvailable")].status}/{.status.conditions[?(@.type=="QuotaLedgerAvailable")].reason}')" = False/LedgerUnreachable ]
}

kvc_assert_ok "a real store to hang, on the bridge address" store hung
kvc_assert_ok "and a healthy one" store healthy
kvc_assert_ok "kvc-hung, an external backend on the first" backend kvc-hung hung
kvc_assert_ok "kvc-healthy, one on the second" backend kvc-healthy healthy
ns=$(kvc_fresh_namespace hung-master)
for p in "${hung_pools[@]}"; do
  kvc_assert_ok "pool $p on kvc-hung, with a Binding" pool_and_binding "$p" kvc-hung 64Mi 32Mi
done
kvc_assert_ok "pool healthy on kvc-healthy, with a Binding" pool_and_binding healthy kvc-healthy 256Mi 32Mi
for p in "${hung_pools[@]}" healthy; do
  kvc_wait_for 120 "Binding $p is granted" granted "$p"
done

hung_pid=$(store_env hung KVC_STORE_MASTER_PID)
kvc_assert_ok "the kvc-hung master is stopped (SIGSTOP)" kill -STOP "$hung_pid"
curl -s -o /dev/null --max-time 2 "http://$(store_env hung KVC_STORE_ADMIN)/health"
kvc_assert_eq "it accepts a connection and answers nothing (curl: timeout, not refused)" 28 "$?"
# The hung pools' passes keep coming: their Bindings' ceilings move every second.
(
  while :; do
    for c in 48Mi 32Mi; do
      for p in "${hung_pools[@]}"; do
        kubectl -n "$ns" patch kvcpb "$p" --type=merge -p "{\"spec\":{\"quota\":{\"ceiling\":\"$c\"}}}" >/dev/null 2>&1
      done
      sleep 1
    done
  done
) &
churner=$!
sleep 3  # both workers have met the hung master by now

worst=0
for i in 1 2 3 4; do
  t0=$(date +%s.%N)
  kvc_assert_ok "Binding ok-$i is created on the healthy pool" binding_on healthy "ok-$i"
  took=$(seconds_until_granted "ok-$i" "$t0") || took=30
  kvc_log "ok-$i granted in the healthy master's ledger $took s after its creation"
  if [ "$(echo "$took > $worst" | bc)" = 1 ]; then worst=$took; fi
  sleep 4
done
kvc_assert_eq "every healthy Binding was granted within 10 s (worst ${worst} s)" 1 "$(echo "$worst <= 10" | bc)"
for p in "${hung_pools[@]}"; do
  kvc_wait_for 30 "pool $p reports QuotaLedgerAvailable=False/LedgerUnreachable" ledger_unreachable "$p"
done
kubectl get kvcp >&2

kill "$churner"; wait "$churner" 2>/dev/null; churner=""
kvc_assert_ok "the kvc-hung master resumes (SIGCONT)" kill -CONT "$hung_pid"
hung_pid=""
want() {
  for p in "${hung_pools[@]}"; do
    echo "dom-$p $(kubectl -n "$ns" get kvcpb "$p" -o jsonpath='{.spec.quota.ceiling}' | numfmt --from=iec-i)"
  done | sort
}
ledger_is_model() { [ "$(ledger hung | grep '^dom-hung-')" = "$(want)" ]; }
kvc_wait_for 60 "its ledger holds every hung Binding's last ceiling" ledger_is_model
for p in "${hung_pools[@]}"; do
  kvc_wait_for 60 "pool $p is Ready again" bash -c "[ \"\$(kubectl get kvcp $p -o jsonpath='{.status.phase}')\" = Ready ]"
done
kvc_done
