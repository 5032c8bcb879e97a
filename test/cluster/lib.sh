# shellcheck shell=bash
# Helpers for bash integration tests that run against the control plane of cluster.sh.
#
#   . "$(dirname "$0")/../lib.sh"      # from test/cluster/tests/*.sh
#   kvc_init                            # honours KVC_SKIP_INTEGRATION, sources the cluster env
#   ns=$(kvc_fresh_namespace)           # unique namespace, deleted when the test exits
#   kvc_assert_eq "what" "$expected" "$actual"
#   kvc_done                            # prints the summary and exits 0/1
#
# The cluster directory comes from $KVC_CLUSTER_DIR (ctest passes the shared one).

KVC_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034  # used by the tests
KVC_REPO_DIR=$(cd "$KVC_LIB_DIR/../.." && pwd)
KVC_PASSED=0
KVC_FAILED=0
KVC_CLEANUP_FILE=""

kvc_log() { printf '[%s %s] %s\n' "${KVC_TEST_NAME:-test}" "$(date +%H:%M:%S)" "$*" >&2; }

# kvc_init: skip loudly on KVC_SKIP_INTEGRATION=1 (exit 77), otherwise load the cluster env.
kvc_init() {
  KVC_TEST_NAME=${KVC_TEST_NAME:-$(basename "${BASH_SOURCE[1]:-$0}" .sh)}
  if [ "${KVC_SKIP_INTEGRATION:-0}" = 1 ]; then
    echo "*** SKIPPED: $KVC_TEST_NAME — KVC_SKIP_INTEGRATION=1 is set, so this integration test did not run ***"
    exit 77
  fi
  local dir=${KVC_CLUSTER_DIR:-}
  if [ -z "$dir" ] || [ ! -s "$dir/env" ]; then
    echo "FAIL: $KVC_TEST_NAME: no cluster environment (KVC_CLUSTER_DIR='$dir'); run test/cluster/cluster.sh up DIR first" >&2
    exit 1
  fi
  # shellcheck disable=SC1091
  . "$dir/env"
  command -v kubectl >/dev/null || { echo "FAIL: kubectl not found in $KVC_K8S_BIN" >&2; exit 1; }
  # What to delete at exit; a file because namespaces are created inside $(...) subshells.
  KVC_CLEANUP_FILE=$(mktemp)
  export KVC_CLEANUP_FILE
  trap kvc_cleanup EXIT
  kvc_log "cluster $KVC_CLUSTER_DIR, apiserver $KVC_APISERVER_URL, $(kubectl version 2>/dev/null | tr '\n' ' ')"
}

# kvc_cleanup: delete what the test registered (runs on EXIT).
kvc_cleanup() {
  local rc=$? obj
  if [ -n "$KVC_CLEANUP_FILE" ] && [ -f "$KVC_CLEANUP_FILE" ]; then
    if [ "${KVC_KEEP_NAMESPACES:-0}" != 1 ]; then
      # cluster-scoped objects first, then namespaces (reverse order of registration)
      tac "$KVC_CLEANUP_FILE" | while read -r obj; do
        [ -n "$obj" ] && kubectl delete "$obj" --ignore-not-found --wait=false >/dev/null 2>&1 || true
      done
    else
      kvc_log "KVC_KEEP_NAMESPACES=1: leaving $(tr '\n' ' ' <"$KVC_CLEANUP_FILE")"
    fi
    rm -rf "$KVC_CLEANUP_FILE" "$KVC_CLEANUP_FILE.d"  # .d: scratch files of the test (keys)
  fi
  return $rc
}

# kvc_register_cluster_object "KIND/NAME": deleted at exit (cluster-scoped objects of the test).
kvc_register_cluster_object() { printf '%s\n' "$1" >>"$KVC_CLEANUP_FILE"; }

# kvc_create_namespace NAME: create NAME, wait for its default ServiceAccount, delete it at exit.
kvc_create_namespace() {
  local ns=$1
  kubectl create namespace "$ns" >/dev/null || return 1
  printf 'namespace/%s\n' "$ns" >>"$KVC_CLEANUP_FILE"
  for _ in $(seq 1 60); do
    kubectl -n "$ns" get serviceaccount default >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "FAIL: the default ServiceAccount of namespace $ns did not appear in 60s" >&2
  return 1
}

# kvc_fresh_namespace [PREFIX]: print a new unique namespace name after creating it.
kvc_fresh_namespace() {
  local prefix=${1:-${KVC_TEST_NAME:-t}}
  prefix=$(printf '%s' "$prefix" | tr 'A-Z_.' 'a-z--' | tr -cd 'a-z0-9-' | cut -c1-40)
  local ns
  ns="${prefix}-$(date +%s)-$RANDOM"
  kvc_create_namespace "$ns" >&2 || return 1
  printf '%s\n' "$ns"
}

# kvc_require_real_nodes: skip loudly (exit 77) when the cluster has no real nodes.
kvc_require_real_nodes() {
  [ -n "${KVC_REAL_NODE_NAMES:-}" ] && return 0
  echo "*** SKIPPED: $KVC_TEST_NAME — this cluster has no real nodes (it was started with KVC_REAL_NODES=0) ***"
  exit 77
}

# kvc_real_nodes_namespace [PREFIX]: a fresh namespace whose Pods may run on the real nodes: it
# carries the empty PodNodeSelector annotation (test/cluster/nodes.sh).
kvc_real_nodes_namespace() {
  local ns; ns=$(kvc_fresh_namespace "$@") || return 1
  kubectl annotate namespace "$ns" scheduler.alpha.kubernetes.io/node-selector= >/dev/null || return 1
  printf '%s\n' "$ns"
}

# kvc_free_port: a TCP port nothing on 127.0.0.1 listens on now, in 20000..29999: above the
# ranges Mooncake binds by itself (12300-14300 store client, 15000-17000 transfer engine), below
# the NodePort range (30000-32767, which kube-proxy redirects on local addresses) and below the
# kernel's ephemeral range (32768-60999): a port chosen there can be taken by any outgoing
# connection (a curl, a watch) before the process it was chosen for binds it.
kvc_free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 10000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

_kvc_pass() { KVC_PASSED=$((KVC_PASSED + 1)); echo "ok   - $1"; }
_kvc_fail() {
  KVC_FAILED=$((KVC_FAILED + 1))
  echo "FAIL - $1"
  shift
  local l; for l in "$@"; do echo "       $l"; done
}

# kvc_assert_eq WHAT EXPECTED ACTUAL
kvc_assert_eq() {
  if [ "$2" = "$3" ]; then _kvc_pass "$1"; else _kvc_fail "$1" "expected: '$2'" "actual:   '$3'"; fi
}

# kvc_assert_contains WHAT NEEDLE HAYSTACK
kvc_assert_contains() {
  case $3 in
    *"$2"*) _kvc_pass "$1" ;;
    *) _kvc_fail "$1" "expected to contain: '$2'" "actual: '$3'" ;;
  esac
}

# kvc_assert_ok WHAT CMD...: the command succeeds (its output is shown on failure).
kvc_assert_ok() {
  local what=$1 out; shift
  if out=$("$@" 2>&1); then _kvc_pass "$what"; else _kvc_fail "$what" "expected: success of: $*" "actual:   exit $? — $out"; fi
}

# kvc_assert_refused WHAT NEEDLE CMD...: the command fails and its output contains NEEDLE.
kvc_assert_refused() {
  local what=$1 needle=$2 out rc=0; shift 2
  out=$("$@" 2>&1) || rc=$?
  if [ $rc = 0 ]; then
    _kvc_fail "$what" "expected: refusal containing '$needle'" "actual:   accepted — $out"
  elif [[ "$out" != *"$needle"* ]]; then
    _kvc_fail "$what" "expected: refusal containing '$needle'" "actual:   exit $rc — $out"
  else
    _kvc_pass "$what"
  fi
}

# kvc_wait_for SECONDS WHAT CMD...: retry CMD every second until it succeeds.
kvc_wait_for() {
  local secs=$1 what=$2 t0=$SECONDS; shift 2
  until "$@" >/dev/null 2>&1; do
    if (( SECONDS - t0 >= secs )); then _kvc_fail "$what" "expected: within ${secs}s" "actual:   still not true; last output: $("$@" 2>&1 | tail -5)"; return 1; fi
    sleep 1
  done
  _kvc_pass "$what ($((SECONDS - t0))s)"
}

# kvc_done: print the closing line and exit with the verdict.
kvc_done() {
  echo "$KVC_PASSED passed, $KVC_FAILED failed"
  [ "$KVC_FAILED" = 0 ] && exit 0 || exit 1
}

# kvc_component_outage NAME SECONDS: an outage of the cluster's NAME (kube-apiserver, etcd): it is
# SIGKILLed (nothing flushed, no goodbye to its clients), kept down SECONDS, then started again
# with the command line and environment cluster.sh gave it, appending to its log, its pid file
# updated (so that cluster.sh down stops the new process).
kvc_component_outage() {
  local name=$1 secs=$2 dir=${KVC_CLUSTER_DIR:?} pid cwd
  local -a argv env
  pid=$(cat "$dir/$name.pid" 2>/dev/null) && [ -d "/proc/$pid" ] || { echo "no running $name" >&2; return 1; }
  mapfile -d '' argv <"/proc/$pid/cmdline"
  mapfile -d '' env <"/proc/$pid/environ"
  cwd=$(readlink "/proc/$pid/cwd")
  kill -KILL "$pid"
  while [ -d "/proc/$pid" ]; do sleep 0.1; done
  sleep "$secs"
  # One simple command in the background (a backgrounded `cd && …` list would leave a bash
  # between, holding the caller's stdout: a $(…) around this would never end).
  (cd "$cwd" || exit 1
   env -i "${env[@]}" setsid "${argv[@]}" </dev/null >>"$dir/$name.log" 2>&1 &
   echo $! >"$dir/$name.pid")
}

# kvc_apiserver_ready: the API server answers /readyz with ok.
kvc_apiserver_ready() { [ "$(kubectl get --raw /readyz 2>/dev/null)" = ok ]; }
