#!/usr/bin/env bash
# A real Mooncake store on 127.0.0.1 (or --host) for tests and for poking at by hand: one mooncake_master
# (multi-tenancy on, file policy connector, admin/metrics HTTP port) and N mooncake_client members
# on TCP, each contributing one memory segment. Ports are chosen free at start; every process is
# stopped by the pid recorded at start; logs stay in DIR.
#
# usage: store.sh [options] up|down|env|status [DIR]
#        store.sh [options] stop-member|start-member I [DIR]
#   up             start the store (stopping a previous one recorded in DIR first), wait until
#                  /health says service_ready and every member's segment is listed, write DIR/env
#   down           stop every process recorded in DIR (SIGTERM, then SIGKILL after 10 s)
#   env            print DIR/env (shell-sourceable: addresses, pids, sizes; see below)
#   status         show the processes, /health and the segment listing
#   stop-member I  SIGTERM member I (0-based). The member does not unmount on SIGTERM: its
#                  segment leaves the listing when the master expires it (--client-ttl)
#   start-member I start member I again under the same segment name, wait until it is listed
#   kill-master    SIGKILL the master (a crash: nothing is unmounted, nothing flushed)
#   start-master   start the master again on the same ports, from the policy file it saved (the
#                  file connector persists every ledger change); wait until service_ready. The
#                  members remount on their own
# options (each also an environment variable):
#   --members N          KVC_STORE_MEMBERS        number of members (default 2)
#   --segment SIZE       KVC_STORE_SEGMENT        segment per member: bytes or N[KMG]i?B? (256MiB)
#   --client-ttl S       KVC_STORE_CLIENT_TTL     master --client_ttl in seconds (default 3)
#   --no-multi-tenancy   KVC_STORE_MULTI_TENANCY=0  a master without --enable_multi_tenants
#   --timeout S          KVC_STORE_TIMEOUT        readiness deadline in seconds (default 60)
#   --host ADDRESS       KVC_STORE_HOST           the address every process listens on and the
#                                                 master is reached at (default 127.0.0.1; the
#                                                 cluster's KVC_HOST_ADDRESS lets Pods reach it)
# DIR defaults to $KVC_STORE_DIR or /tmp/kvc-store. The venv comes from install.sh, which `up`
# runs when the wheel is not installed yet.
#
# DIR/env defines KVC_STORE_DIR, KVC_STORE_VERSION, KVC_STORE_VENV, KVC_STORE_PYTHON,
# KVC_STORE_BIN_DIR, KVC_STORE_LD_LIBRARY_PATH, KVC_STORE_ADMIN (host:port of the admin/metrics
# HTTP server), KVC_STORE_RPC (host:port of the master RPC), KVC_STORE_MULTI_TENANCY (1|0),
# KVC_STORE_POLICY_FILE, KVC_STORE_CLIENT_TTL, KVC_STORE_MASTER_PID, KVC_STORE_MEMBERS,
# KVC_STORE_SEGMENT_BYTES and, per member i, KVC_STORE_MEMBER_<i>_PID, KVC_STORE_MEMBER_<i>_PORT
# (its RPC port) and KVC_STORE_MEMBER_<i>_SEGMENT (its segment name, host:port). Every process
# of the store carries KVC_STORE_INSTANCE=DIR in its environment, which `down` also uses to find
# any process whose pid was not recorded.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=paths.sh
. "$HERE/paths.sh"

MEMBERS=${KVC_STORE_MEMBERS:-2}
SEGMENT=${KVC_STORE_SEGMENT:-256MiB}
HOST=${KVC_STORE_HOST:-127.0.0.1}
CLIENT_TTL=${KVC_STORE_CLIENT_TTL:-3}
MULTI_TENANCY=${KVC_STORE_MULTI_TENANCY:-1}
TIMEOUT=${KVC_STORE_TIMEOUT:-60}
ARGS=()
while [ $# -gt 0 ]; do
  case $1 in
    --members) shift; MEMBERS=${1:?} ;;
    --members=*) MEMBERS=${1#*=} ;;
    --segment) shift; SEGMENT=${1:?} ;;
    --segment=*) SEGMENT=${1#*=} ;;
    --host) shift; HOST=${1:?} ;;
    --host=*) HOST=${1#*=} ;;
    --client-ttl) shift; CLIENT_TTL=${1:?} ;;
    --client-ttl=*) CLIENT_TTL=${1#*=} ;;
    --no-multi-tenancy) MULTI_TENANCY=0 ;;
    --timeout) shift; TIMEOUT=${1:?} ;;
    --timeout=*) TIMEOUT=${1#*=} ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    -*) echo "store.sh: unknown option '$1'" >&2; exit 2 ;;
    *) ARGS+=("$1") ;;
  esac
  shift
done
set -- "${ARGS[@]+"${ARGS[@]}"}"
CMD=${1:-}
[ -n "$CMD" ] || { sed -n '2,32p' "$0" >&2; exit 2; }
shift
MEMBER_INDEX=
case $CMD in
  stop-member|start-member) MEMBER_INDEX=${1:?"$CMD needs a member index"}; shift ;;
  up|down|env|status|kill-master|start-master) ;;
  *) echo "store.sh: unknown command '$CMD'" >&2; exit 2 ;;
esac
DIR=${1:-${KVC_STORE_DIR:-/tmp/kvc-store}}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
ENV_FILE=$DIR/env

log() { printf '[store %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
UP_STARTED=0
die() {
  log "ERROR: $*"
  if [ "$UP_STARTED" = 1 ]; then
    # A failed start leaves nothing running, and says why in ctest's output.
    local f
    for f in "$DIR"/master.log "$DIR"/member-*.log; do
      [ -f "$f" ] || continue
      log "---- last lines of $f"
      grep -v 'Master Admin Metrics' "$f" | tail -n 15 >&2 || true
    done
    UP_STARTED=0
    cmd_down || true
  fi
  exit 1
}

# "256MiB", "256MB", "1G", "1048576" -> bytes (binary units: Mooncake reads "MB" as 2^20).
to_bytes() {
  local s=$1 n u
  [[ $s =~ ^([0-9]+)[[:space:]]*([KkMmGgTt]?)(i?)[Bb]?$ ]] || return 1
  n=${BASH_REMATCH[1]} u=${BASH_REMATCH[2]}
  case $u in
    '') echo "$n" ;;
    K|k) echo $((n << 10)) ;;
    M|m) echo $((n << 20)) ;;
    G|g) echo $((n << 30)) ;;
    T|t) echo $((n << 40)) ;;
  esac
}

# True when PID exists and has not exited (a zombie has).
is_alive() {
  local pid=$1 state
  [ -n "$pid" ] && [ -e "/proc/$pid" ] || return 1
  state=$(sed -n 's/^[0-9]* (.*) \(.\).*/\1/p' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# True when PID is alive and was started by this store: it carries KVC_STORE_INSTANCE=$DIR in
# its environment (guards against a recycled pid).
is_ours() {
  local pid=$1
  is_alive "$pid" || return 1
  grep -qaxz -- "KVC_STORE_INSTANCE=$DIR" "/proc/$pid/environ" 2>/dev/null
}

# Pids of every live process of this store, recorded or not (a safety net for `down`).
instance_pids() {
  local f pid
  for f in /proc/[0-9]*/environ; do
    pid=${f#/proc/}
    pid=${pid%/environ}
    [ "$pid" != $$ ] || continue
    if grep -qaxz -- "KVC_STORE_INSTANCE=$DIR" "$f" 2>/dev/null && is_alive "$pid"; then
      echo "$pid"
    fi
  done
}

# launch LOG BINARY ARGS...: starts BINARY in a session of its own, detached from the caller
# (stdin /dev/null, output appended to LOG), marked with KVC_STORE_INSTANCE=$DIR, and sets
# LAUNCHED_PID to its pid. Python's setsid()+execv() keeps the pid, unlike setsid(1), which forks
# when the caller leads a process group; the packaged binary is exec'd directly.
launch() {
  local log=$1
  shift
  KVC_STORE_INSTANCE=$DIR LD_LIBRARY_PATH=$KVC_STORE_LD_LIBRARY_PATH "$KVC_STORE_PYTHON" -c '
import os, sys
try:
    os.setsid()
except OSError:
    pass  # already a group leader: its own group is detached enough
os.execv(sys.argv[1], sys.argv[1:])' "$@" </dev/null >>"$log" 2>&1 &
  LAUNCHED_PID=$!
}

stop_pid() {
  local pid=$1 name=$2 i
  if ! is_ours "$pid"; then
    return 0
  fi
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 100); do
    is_alive "$pid" || return 0
    sleep 0.1
  done
  log "$name (pid $pid) ignored SIGTERM for 10 s; SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 50); do
    is_alive "$pid" || return 0
    sleep 0.1
  done
  die "$name (pid $pid) did not exit"
}

# Free TCP ports on 127.0.0.1, drawn from 20000-29999: above the ranges Mooncake binds by itself
# (12300-14300 store client, 15000-17000 transfer engine), below the NodePort range and below the
# kernel's ephemeral range (kvc_free_port in test/cluster/lib.sh says why).
free_ports() {
  "$PYTHON" - "$1" <<'EOF'
import random, socket, sys
want, got, socks = int(sys.argv[1]), [], []
rng = random.SystemRandom()
for _ in range(2000):
    if len(got) == want:
        break
    p = rng.randrange(20000, 30000)
    if p in got:
        continue
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        s.close()
        continue
    socks.append(s)
    got.append(p)
for s in socks:
    s.close()
if len(got) != want:
    sys.exit("no free ports")
print(" ".join(map(str, got)))
EOF
}

http_get() { curl -s --max-time 2 --noproxy '*' "http://$ADMIN$1"; }

service_ready() {
  http_get /health | "$PYTHON" -c \
    'import json,sys; sys.exit(0 if json.load(sys.stdin).get("service_ready") is True else 1)' \
    2>/dev/null
}

# Prints "count total" of the listed segments whose names are among the arguments (all if none).
listed_segments() {
  http_get /get_segments_detail | "$PYTHON" -c '
import json, sys
want = set(sys.argv[1:])
segs = [s for s in json.load(sys.stdin)["segments"] if not want or s["segment_name"] in want]
print(len(segs), sum(s["size_bytes"] for s in segs))' "$@" 2>/dev/null || echo "0 0"
}

load_env() {
  [ -f "$ENV_FILE" ] || die "no store recorded in $DIR (run: store.sh up $DIR)"
  # shellcheck disable=SC1090
  . "$ENV_FILE"
  ADMIN=$KVC_STORE_ADMIN
  PYTHON=$KVC_STORE_PYTHON
}

write_env() {
  local i tmp=$ENV_FILE.tmp
  {
    echo "# Written by test/store/store.sh up on $(date -u +%Y-%m-%dT%H:%M:%SZ); source it."
    printf "KVC_STORE_DIR='%s'\n" "$DIR"
    printf "KVC_STORE_VERSION='%s'\n" "$KVC_STORE_VERSION"
    printf "KVC_STORE_VENV='%s'\n" "$KVC_STORE_VENV"
    printf "KVC_STORE_PYTHON='%s'\n" "$KVC_STORE_PYTHON"
    printf "KVC_STORE_BIN_DIR='%s'\n" "$KVC_STORE_BIN_DIR"
    printf "KVC_STORE_LD_LIBRARY_PATH='%s'\n" "$KVC_STORE_LD_LIBRARY_PATH"
    printf "KVC_STORE_ADMIN='%s'\n" "$KVC_STORE_ADMIN"
    printf "KVC_STORE_RPC='%s'\n" "$KVC_STORE_RPC"
    printf "KVC_STORE_MULTI_TENANCY=%s\n" "$KVC_STORE_MULTI_TENANCY"
    printf "KVC_STORE_POLICY_FILE='%s'\n" "$KVC_STORE_POLICY_FILE"
    printf "KVC_STORE_CLIENT_TTL=%s\n" "$KVC_STORE_CLIENT_TTL"
    printf "KVC_STORE_MASTER_PID=%s\n" "$KVC_STORE_MASTER_PID"
    printf "KVC_STORE_MEMBERS=%s\n" "$KVC_STORE_MEMBERS"
    printf "KVC_STORE_SEGMENT_BYTES=%s\n" "$KVC_STORE_SEGMENT_BYTES"
    for ((i = 0; i < KVC_STORE_MEMBERS; i++)); do
      local pid=KVC_STORE_MEMBER_${i}_PID port=KVC_STORE_MEMBER_${i}_PORT
      local seg=KVC_STORE_MEMBER_${i}_SEGMENT
      printf "%s=%s\n%s=%s\n%s='%s'\n" "$pid" "${!pid}" "$port" "${!port}" "$seg" "${!seg}"
    done
  } >"$tmp"
  mv -f "$tmp" "$ENV_FILE"
}

# start_member I: launch member I with the recorded ports, record its pid.
start_member_process() {
  local i=$1 port seg pid
  port=KVC_STORE_MEMBER_${i}_PORT seg=KVC_STORE_MEMBER_${i}_SEGMENT
  # --host with a port pins the segment name, so a restarted member comes back under its name.
  launch "$DIR/member-$i.log" "$KVC_STORE_BIN_DIR/mooncake_client" \
    --host="${!seg}" --port="${!port}" --master_server_address="$KVC_STORE_RPC" \
    --metadata_server=P2PHANDSHAKE --protocol=tcp --device_names= \
    --global_segment_size="$KVC_STORE_SEGMENT_BYTES" --local_buffer_size=0
  pid=$LAUNCHED_PID
  printf -v "KVC_STORE_MEMBER_${i}_PID" '%s' "$pid"
  echo "$pid" >"$DIR/member-$i.pid"
  log "member $i: pid $pid, segment ${!seg} ($KVC_STORE_SEGMENT_BYTES bytes), rpc port ${!port}"
}

# start_member I: launch member I and wait until it is listed; a member that exits during its
# start (a port race in the transfer engine's range, say) is started again, up to 3 times.
start_member() {
  local i=$1 attempt rc
  for attempt in 1 2 3; do
    start_member_process "$i"
    write_env
    rc=0
    wait_member_listed "$i" || rc=$?
    [ $rc = 0 ] && return 0
    [ $rc = 2 ] || die "member $i: waiting for its segment failed"
    log "member $i: start attempt $attempt failed; retrying"
  done
  die "member $i did not start after 3 attempts; log: $DIR/member-$i.log"
}

# wait_member_listed I: until member I's segment is listed with its full size; returns 2 when the
# member exited first.
wait_member_listed() {
  local i=$1 seg pid deadline got
  seg=KVC_STORE_MEMBER_${i}_SEGMENT pid=KVC_STORE_MEMBER_${i}_PID
  deadline=$(( $(date +%s) + TIMEOUT ))
  while :; do
    got=$(listed_segments "${!seg}")
    [ "$got" = "1 $KVC_STORE_SEGMENT_BYTES" ] && return 0
    if ! is_alive "${!pid}"; then
      log "member $i (pid ${!pid}) exited before its segment was listed; log: $DIR/member-$i.log"
      grep -v '^I' "$DIR/member-$i.log" | tail -n 10 >&2 || true
      return 2
    fi
    [ "$(date +%s)" -lt "$deadline" ] || die "member $i's segment ${!seg} not listed within \
${TIMEOUT}s (listing: $got); log: $DIR/member-$i.log"
    sleep 0.1
  done
}

start_master() {
  local args=(--rpc_address="${KVC_STORE_RPC%:*}" --rpc_port="${KVC_STORE_RPC##*:}"
    --metrics_port="${KVC_STORE_ADMIN##*:}"
    --client_ttl="$KVC_STORE_CLIENT_TTL" --default_kv_lease_ttl=10s
    --enable_http_metadata_server=false)
  # --metrics_host exists from 0.3.13 on; 0.3.12.x binds the admin port on every interface and
  # exits on the unknown flag.
  local flags
  flags=$(LD_LIBRARY_PATH="$KVC_STORE_LD_LIBRARY_PATH" "$KVC_STORE_BIN_DIR/mooncake_master" \
    --helpfull 2>&1 || true)
  if grep -q -- '-metrics_host ' <<<"$flags"; then
    args+=(--metrics_host="${KVC_STORE_ADMIN%:*}")
  fi
  if [ "$KVC_STORE_MULTI_TENANCY" = 1 ]; then
    # The file connector needs the file to exist and parse at start, in a writable directory.
    # A restart (start-master) keeps the file the master saved.
    if [ "${1:-fresh}" = fresh ] || [ ! -s "$KVC_STORE_POLICY_FILE" ]; then
      printf 'version: 1\ntenants: []\n' >"$KVC_STORE_POLICY_FILE"
    fi
    args+=(--enable_multi_tenants=true --tenant_quota_connector_type=file
      --tenant_quota_connector_uri="$KVC_STORE_POLICY_FILE")
  fi
  printf '%q ' "$KVC_STORE_BIN_DIR/mooncake_master" "${args[@]}" >"$DIR/master.cmdline"
  launch "$DIR/master.log" "$KVC_STORE_BIN_DIR/mooncake_master" "${args[@]}"
  KVC_STORE_MASTER_PID=$LAUNCHED_PID
  echo "$KVC_STORE_MASTER_PID" >"$DIR/master.pid"
}

cmd_up() {
  if [ -f "$ENV_FILE" ] || [ -n "$(instance_pids)" ]; then
    log "a store is recorded or running in $DIR; stopping it first"
    cmd_down
  fi
  rm -f "$ENV_FILE" "$DIR"/*.pid "$DIR"/*.log.prev "$DIR/master.cmdline"
  local old_log
  for old_log in "$DIR"/*.log; do
    [ -f "$old_log" ] && mv -f "$old_log" "$old_log.prev"
  done
  UP_STARTED=1
  [[ $MEMBERS =~ ^[0-9]+$ ]] || die "--members must be a whole number, got '$MEMBERS'"
  local seg_bytes
  seg_bytes=$(to_bytes "$SEGMENT") || die "--segment: cannot read '$SEGMENT' as a size"
  # mooncake_client turns a size below 1 KiB into an error and an unparseable one into 0.
  [ "$seg_bytes" -ge 1024 ] || [ "$MEMBERS" = 0 ] || die "--segment must be at least 1 KiB"

  if ! "$HERE/install.sh" --check >/dev/null 2>&1; then
    log "the pinned wheel is not installed; running install.sh"
    "$HERE/install.sh"
  fi
  KVC_STORE_VERSION=$KVC_MOONCAKE_VERSION
  KVC_STORE_VENV=$KVC_MOONCAKE_VENV
  KVC_STORE_PYTHON=$KVC_MOONCAKE_VENV/bin/python
  # The packaged binaries (the venv's console scripts are Python wrappers that exec them).
  KVC_STORE_BIN_DIR=$("$KVC_STORE_PYTHON" -c \
    'import mooncake, os; print(os.path.dirname(mooncake.__file__))') \
    || die "cannot locate the mooncake package in $KVC_STORE_VENV"
  KVC_STORE_LD_LIBRARY_PATH=$(cat "$KVC_MOONCAKE_DIR/ld-library-path" 2>/dev/null || true)
  KVC_STORE_MULTI_TENANCY=$MULTI_TENANCY
  KVC_STORE_POLICY_FILE=
  [ "$MULTI_TENANCY" = 1 ] && KVC_STORE_POLICY_FILE=$DIR/tenant_quotas.yaml
  KVC_STORE_CLIENT_TTL=$CLIENT_TTL
  KVC_STORE_MEMBERS=$MEMBERS
  KVC_STORE_SEGMENT_BYTES=$seg_bytes
  PYTHON=$KVC_STORE_PYTHON

  local start attempt ports i
  start=$(date +%s%N)
  # A port taken between the probe and the bind makes the master exit: try again with others.
  for attempt in 1 2 3; do
    read -r -a ports <<<"$(free_ports $((2 + 2 * MEMBERS)))"
    KVC_STORE_RPC=$HOST:${ports[0]}
    KVC_STORE_ADMIN=$HOST:${ports[1]}
    ADMIN=$KVC_STORE_ADMIN
    for ((i = 0; i < MEMBERS; i++)); do
      printf -v "KVC_STORE_MEMBER_${i}_PORT" '%s' "${ports[$((2 + 2 * i))]}"
      printf -v "KVC_STORE_MEMBER_${i}_SEGMENT" '%s' "$HOST:${ports[$((3 + 2 * i))]}"
      printf -v "KVC_STORE_MEMBER_${i}_PID" '%s' ""
    done
    log "master $KVC_MOONCAKE_VERSION: rpc $KVC_STORE_RPC, admin http://$KVC_STORE_ADMIN," \
      "multi-tenancy $([ "$MULTI_TENANCY" = 1 ] && echo on || echo off), client_ttl ${CLIENT_TTL}s"
    start_master
    write_env
    local deadline=$(( $(date +%s) + TIMEOUT )) up=0
    while [ "$(date +%s)" -lt "$deadline" ]; do
      if service_ready; then up=1; break; fi
      is_alive "$KVC_STORE_MASTER_PID" || break
      sleep 0.05
    done
    [ $up = 1 ] && break
    if is_alive "$KVC_STORE_MASTER_PID"; then
      stop_pid "$KVC_STORE_MASTER_PID" master
      die "master not service_ready within ${TIMEOUT}s; log: $DIR/master.log"
    fi
    log "master exited during start (attempt $attempt):"
    tail -n 5 "$DIR/master.log" >&2 || true
  done
  [ $up = 1 ] || die "master did not start; log: $DIR/master.log"
  log "master ready (pid $KVC_STORE_MASTER_PID) after $(( ($(date +%s%N) - start) / 1000000 )) ms"

  for ((i = 0; i < MEMBERS; i++)); do
    start_member "$i"
  done
  local got
  got=$(listed_segments)
  [ "$got" = "$MEMBERS $((MEMBERS * seg_bytes))" ] \
    || die "listing shows '$got' (count bytes), expected '$MEMBERS $((MEMBERS * seg_bytes))'"
  UP_STARTED=0
  log "store up in $(( ($(date +%s%N) - start) / 1000000 )) ms: $MEMBERS member(s)," \
    "capacity $((MEMBERS * seg_bytes)) bytes; env: $ENV_FILE"
}

cmd_down() {
  local i pid
  if [ -f "$ENV_FILE" ]; then
    load_env
    for ((i = 0; i < KVC_STORE_MEMBERS; i++)); do
      pid=KVC_STORE_MEMBER_${i}_PID
      stop_pid "${!pid}" "member $i"
    done
    stop_pid "$KVC_STORE_MASTER_PID" master
  fi
  # Anything else this store started (a start that failed half-way, a pid file lost): found by
  # its KVC_STORE_INSTANCE marker, stopped by pid.
  for pid in $(instance_pids); do
    log "process $pid of this store was not recorded; stopping it"
    stop_pid "$pid" "process $pid"
  done
  rm -f "$ENV_FILE" "$DIR"/*.pid
  log "store in $DIR stopped (logs kept)"
}

cmd_status() {
  load_env
  local i pid seg state=0
  printf 'master  pid %-8s %s  rpc %s  admin http://%s\n' "$KVC_STORE_MASTER_PID" \
    "$(is_ours "$KVC_STORE_MASTER_PID" && echo running || { state=1; echo STOPPED; })" \
    "$KVC_STORE_RPC" "$KVC_STORE_ADMIN"
  for ((i = 0; i < KVC_STORE_MEMBERS; i++)); do
    pid=KVC_STORE_MEMBER_${i}_PID seg=KVC_STORE_MEMBER_${i}_SEGMENT
    printf 'member %d pid %-8s %s  segment %s\n' "$i" "${!pid}" \
      "$(is_ours "${!pid}" && echo running || echo STOPPED)" "${!seg}"
  done
  echo "health:   $(http_get /health || echo unreachable)"
  echo "segments: $(listed_segments) (count bytes)"
  return $state
}

case $CMD in
  up) cmd_up ;;
  kill-master)
    load_env
    if is_ours "$KVC_STORE_MASTER_PID"; then
      kill -KILL "$KVC_STORE_MASTER_PID" 2>/dev/null || true
      for _ in $(seq 1 100); do is_alive "$KVC_STORE_MASTER_PID" || break; sleep 0.05; done
      log "master (pid $KVC_STORE_MASTER_PID) killed"
    fi
    ;;
  start-master)
    load_env
    is_ours "$KVC_STORE_MASTER_PID" && die "the master is running (pid $KVC_STORE_MASTER_PID)"
    ADMIN=$KVC_STORE_ADMIN
    start_master keep
    write_env
    deadline=$(( $(date +%s) + TIMEOUT ))
    until service_ready; do
      is_alive "$KVC_STORE_MASTER_PID" || die "the master exited; log: $DIR/master.log"
      [ "$(date +%s)" -lt "$deadline" ] || die "master not service_ready within ${TIMEOUT}s"
      sleep 0.05
    done
    log "master ready again (pid $KVC_STORE_MASTER_PID)"
    ;;
  down) cmd_down ;;
  env) [ -f "$ENV_FILE" ] || die "no store recorded in $DIR"; cat "$ENV_FILE" ;;
  status) cmd_status ;;
  stop-member|start-member)
    load_env
    [[ $MEMBER_INDEX =~ ^[0-9]+$ ]] && [ "$MEMBER_INDEX" -lt "$KVC_STORE_MEMBERS" ] \
      || die "member index must be 0..$((KVC_STORE_MEMBERS - 1)), got '$MEMBER_INDEX'"
    pid=KVC_STORE_MEMBER_${MEMBER_INDEX}_PID
    if [ "$CMD" = stop-member ]; then
      stop_pid "${!pid}" "member $MEMBER_INDEX"
    else
      is_ours "${!pid}" && die "member $MEMBER_INDEX is running (pid ${!pid})"
      # Its previous mount stays listed until the master expires it (--client_ttl): wait, so
      # that the listing seen next is the new mount's.
      seg=KVC_STORE_MEMBER_${MEMBER_INDEX}_SEGMENT
      deadline=$(( $(date +%s) + KVC_STORE_CLIENT_TTL + 30 ))
      if [ "$(listed_segments "${!seg}")" != "0 0" ]; then
        log "member $MEMBER_INDEX: waiting for its previous mount to expire"
      fi
      while [ "$(listed_segments "${!seg}")" != "0 0" ]; do
        [ "$(date +%s)" -lt "$deadline" ] || die "the previous mount of ${!seg} did not expire"
        sleep 0.2
      done
      start_member "$MEMBER_INDEX"
      log "member $MEMBER_INDEX listed again"
    fi
    ;;
esac
