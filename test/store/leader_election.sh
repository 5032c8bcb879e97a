#!/usr/bin/env bash
# `kvcache store leader` and `kvcache store member` with the real API server and the wheel's real
# mooncake_master and mc_store_rest_server: two candidates campaign for one Lease; exactly one
# runs a master that serves, the other is a standby whose /healthz still answers; a member
# addressed by the Lease (k8s://ns/lease) mounts its segment on the holder's master. The holder
# stopped by SIGTERM (a Pod deletion) hands over at once, and a holder killed with SIGKILL (a
# node failure) after the Lease expires, its master dying with it; each time the member
# re-mounts on the new master. Prints each failover time: from the signal until the new master
# serves, and until the member's segment is listed there. Run by ctest with the store's env
# (KVC_STORE_BIN_DIR, KVC_STORE_LD_LIBRARY_PATH) and KVC_CLUSTER_DIR; usage: leader_election.sh
# KVCACHE-BINARY.
. "$(dirname "$0")/../cluster/lib.sh"
kvc_init
kvcache=${1:?usage: leader_election.sh KVCACHE-BINARY}
ns=$(kvc_fresh_namespace store-leader)
lease=mooncake-leader
dir=$(mktemp -d)
declare -A launcher admin health
cleanup_launchers() {
  local pid name; for pid in "${launcher[@]}"; do kill -9 "$pid" 2>/dev/null; done
  # A failure is read from what each process said: their logs go with the test's output.
  if [ "${KVC_FAILED:-0}" -gt 0 ]; then
    for name in a b member none; do
      [ -s "$dir/$name.log" ] || continue
      echo "--- the last lines of $name's log" >&2
      tail -25 "$dir/$name.log" >&2
    done
  fi
  rm -rf "$dir"
}
trap 'cleanup_launchers; kvc_cleanup' EXIT

start() {  # start NAME: a candidate with its own master ports
  local name=$1 rpc
  rpc=$(kvc_free_port) admin[$name]=$(kvc_free_port) health[$name]=$(kvc_free_port)
  LD_LIBRARY_PATH=$KVC_STORE_LD_LIBRARY_PATH "$kvcache" store leader --lease "$ns/$lease" \
    --identity "$name" --kubeconfig "$KUBECONFIG" --health-address "127.0.0.1:${health[$name]}" \
    --advertise-address "127.0.0.1:$rpc" \
    --lease-duration 4s --renew-deadline 3s --retry-period 500ms --stop-grace 500ms -- \
    "$KVC_STORE_BIN_DIR/mooncake_master" -rpc_address=127.0.0.1 "-rpc_port=$rpc" \
    "-metrics_port=${admin[$name]}" >"$dir/$name.log" 2>&1 &
  launcher[$name]=$!
}
serving() { curl -s --max-time 1 "http://127.0.0.1:${admin[$1]}/health" 2>/dev/null | grep -q service_ready; }
# mounted NAME: the member's segment is listed by NAME's master.
mounted() { curl -s --max-time 1 "http://127.0.0.1:${admin[$1]}/get_all_segments" 2>/dev/null | grep -q "127.0.0.1:"; }
holder() { kubectl -n "$ns" get lease "$lease" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
other() { [ "$1" = a ] && echo b || echo a; }
# failover_after SIGNAL T0 NEW: the checks after the holder got SIGNAL at T0 and NEW should take
# over: NEW's master serves, and the member's segment is listed there; prints both times.
failover_after() {
  local signal=$1 t0=$2 new=$3 took remount
  if took=$(since "$t0" serving "$new"); then
    _kvc_pass "after $signal of the holder, $new's master serves (${took}s; Lease 4s)"
  else
    _kvc_fail "after $signal of the holder, $new's master serves" "within 60s" "$(tail -5 "$dir/$new.log")"
  fi
  if remount=$(since "$t0" mounted "$new"); then
    _kvc_pass "and the member re-mounted there (${remount}s after the signal)"
  else
    _kvc_fail "and the member re-mounted there" "within 60s" "$(tail -5 "$dir/member.log")"
  fi
  echo "failover after $signal: master ${took:-none} s, member re-mounted ${remount:-none} s" >&2
}
# since T0 CHECK NAME: seconds (0.1 s resolution) from T0 until CHECK NAME succeeds, at most 60 s.
since() {
  local t0=$1 now
  for _ in $(seq 600); do
    if "$2" "$3"; then
      now=$(date +%s.%N)
      awk -v a="$now" -v b="$t0" 'BEGIN { printf "%.1f\n", a - b }'
      return 0
    fi
    sleep 0.1
  done
  return 1
}

start a
start b
member_port=$(kvc_free_port)
MOONCAKE_MASTER="k8s://$ns/$lease" MOONCAKE_PROTOCOL=tcp MOONCAKE_LOCAL_HOSTNAME=127.0.0.1 \
  MOONCAKE_TE_META_DATA_SERVER=P2PHANDSHAKE MOONCAKE_GLOBAL_SEGMENT_SIZE=67108864 \
  LD_LIBRARY_PATH=$KVC_STORE_LD_LIBRARY_PATH "$kvcache" store member --kubeconfig "$KUBECONFIG" \
  --stop-grace 2s -- "$KVC_STORE_VENV/bin/mc_store_rest_server" --port "$member_port" \
  >"$dir/member.log" 2>&1 &
launcher[member]=$!
kvc_wait_for 60 "one candidate holds the Lease" bash -c "[ -n \"\$(kubectl -n $ns get lease $lease -o jsonpath='{.spec.holderIdentity}')\" ]"
first=$(holder)
kvc_wait_for 60 "the holder's master serves" serving "$first"
standby=$(other "$first")
sleep 2
if serving "$standby"; then serving_standby=yes; else serving_standby=no; fi
kvc_assert_eq "the standby runs no master" no "$serving_standby"
kvc_assert_contains "the standby's /healthz answers" "ok: standby" \
  "$(curl -s "http://127.0.0.1:${health[$standby]}/healthz")"
kvc_assert_contains "the holder's /healthz says it leads" "ok: leader, master running" \
  "$(curl -s "http://127.0.0.1:${health[$first]}/healthz")"
kvc_wait_for 90 "the Lease-addressed member mounts on the holder's master" mounted "$first"

# A Pod deletion: SIGTERM stops the master and releases the Lease.
t0=$(date +%s.%N)
kill -TERM "${launcher[$first]}"
failover_after SIGTERM "$t0" "$standby"
wait "${launcher[$first]}"; code=$?
kvc_assert_eq "the SIGTERMed launcher exits 0" 0 "$code"
kvc_assert_eq "the Lease names the new holder" "$standby" "$(holder)"

# A node failure: SIGKILL of the holder's launcher; its master dies with it (no split brain),
# and the restarted candidate takes over once the Lease expires.
start "$first"
second=$standby
master_pid=$(pgrep -P "${launcher[$second]}" mooncake_master)
kvc_assert_ok "the holder's launcher runs its master" test -n "$master_pid"
t0=$(date +%s.%N)
kill -KILL "${launcher[$second]}"
sleep 1
# Gone or a zombie (dead, waiting for whoever inherited it to reap it).
state=$([ -n "$master_pid" ] && awk '{ print $3 }' "/proc/$master_pid/stat" 2>/dev/null)
if [ -n "$state" ] && [ "$state" != Z ]; then alive=yes; else alive=no; fi
kvc_assert_eq "the killed launcher's master died with it" no "$alive"
failover_after SIGKILL "$t0" "$first"
kvc_assert_eq "the Lease names it" "$first" "$(holder)"

# electionBackend None: no Lease, the master runs at once.
rpc=$(kvc_free_port) admin[none]=$(kvc_free_port)
LD_LIBRARY_PATH=$KVC_STORE_LD_LIBRARY_PATH "$kvcache" store leader --health-address 0 -- \
  "$KVC_STORE_BIN_DIR/mooncake_master" -rpc_address=127.0.0.1 "-rpc_port=$rpc" \
  "-metrics_port=${admin[none]}" >"$dir/none.log" 2>&1 &
launcher[none]=$!
kvc_wait_for 60 "without --lease the master runs at once" serving none
kill -TERM "${launcher[member]}"
wait "${launcher[member]}"; code=$?
kvc_assert_eq "the SIGTERMed member supervisor exits 0" 0 "$code"
kvc_assert_refused "a malformed --lease names the flag" "--lease" \
  "$kvcache" store leader --lease nolash -- true
kvc_done
