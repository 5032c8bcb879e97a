#!/usr/bin/env bash
# The pool controller's reconcile benchmark (DESIGN.md §6: a pass over an unchanged store writes
# nothing; 100 pools x 10 Bindings on one master reconciled without falling behind a 30 s resync;
# a Binding created -> Ready with its grant <= 2 s p99). Brings up everything it measures — a
# private control plane (or the one in KVC_CLUSTER_DIR), a real Mooncake master with 2 members x
# 256 MiB, the CRDs, `kvcache operator` without webhooks — runs bench_reconcile against it, and
# stops whatever it started. Figures: a Markdown table on stdout, and DIR/result.json.
#
# usage: bench/controllers/run.sh [bench_reconcile options: --pools N --bindings-per-pool N
#                                  --namespaces N --ceiling Q --steady-seconds S --singles N ...]
# environment:
#   KVC_BUILD_DIR    build directory with src/cmd/kvcache (default: build-dev, else build)
#   KVC_CLUSTER_DIR  reuse this running control plane (left running; the run's objects are
#                    deleted at the end); default: a private one in DIR/cluster, purged at the end
#   KVC_BENCH_DIR    where logs and results go (default: a new /tmp/kvc-rbench.XXXXXX, kept)
#   KVC_NO_BUILD=1   do not build kvcache and bench_reconcile first
#   KVC_OPERATOR_ARGS  extra flags for `kvcache operator` (e.g. "--workers 4")
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KVC_BUILD_DIR:-}
if [ -z "$build" ]; then
  build=$root/build-dev
  [ -d "$build" ] || build=$root/build
fi
kvcache=$build/src/cmd/kvcache
bench=$build/bench/controllers/bench_reconcile
if [ "${KVC_NO_BUILD:-0}" != 1 ]; then
  cmake --build "$build" --target kvcache bench_reconcile >/dev/null
fi
[ -x "$kvcache" ] && [ -x "$bench" ] || { echo "run.sh: $kvcache or $bench missing" >&2; exit 1; }

work=${KVC_BENCH_DIR:-$(mktemp -d /tmp/kvc-rbench.XXXXXX)}
mkdir -p "$work"
log() { printf '[run.sh %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
id=$(printf '%04x%02x' "$((RANDOM % 65536))" "$((RANDOM % 256))")
label=kvcache-bench.gpustack.ai/run
own_cluster=0
cluster=${KVC_CLUSTER_DIR:-}
store=$work/store
operator_pid=
bench_pid=

cleanup() {
  local rc=$?
  set +e
  if [ -n "$bench_pid" ] && kill -0 "$bench_pid" 2>/dev/null; then
    kill "$bench_pid"
    wait "$bench_pid" 2>/dev/null
  fi
  if [ -n "${KUBECONFIG:-}" ] && [ "$own_cluster" = 0 ]; then
    # A shared cluster keeps running. bench_reconcile --cleanup deleted the run's objects while
    # the operator could still release them; if it did not get there, delete them now (the
    # operator cannot reach the master any more: the bench's proxy is gone) and let go of them.
    if [ -n "$(kubectl get kvcachepoolbindings,kvcachepools,kvcachebackends -A -l "$label=$id" -o name 2>/dev/null)" ]; then
      log "removing what is left of the run's objects from $cluster"
      kubectl delete kvcachepoolbindings -A -l "$label=$id" --wait=false >/dev/null 2>&1
      kubectl delete kvcachepools -l "$label=$id" --wait=false >/dev/null 2>&1
      kubectl delete kvcachebackends -l "$label=$id" --wait=false >/dev/null 2>&1
      for _ in $(seq 20); do
        [ -z "$(kubectl get kvcachepoolbindings,kvcachepools,kvcachebackends -A -l "$label=$id" -o name 2>/dev/null)" ] && break
        sleep 1
      done
    fi
  fi
  if [ -n "$operator_pid" ] && kill -0 "$operator_pid" 2>/dev/null; then
    kill "$operator_pid"
    for _ in $(seq 30); do kill -0 "$operator_pid" 2>/dev/null || break; sleep 1; done
    kill -9 "$operator_pid" 2>/dev/null
  fi
  if [ -n "${KUBECONFIG:-}" ] && [ "$own_cluster" = 0 ]; then
    local kind
    for kind in kvcachepoolbindings kvcachepools kvcachebackends; do
      kubectl get "$kind" -A -l "$label=$id" \
        -o jsonpath='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{"\n"}{end}' 2>/dev/null |
        while read -r ns name; do
          [ -z "$name" ] && { name=$ns; ns=; }
          kubectl ${ns:+-n "$ns"} patch "$kind" "$name" --type=merge \
            -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
        done
      kubectl delete "$kind" -A -l "$label=$id" --wait=false >/dev/null 2>&1
    done
    kubectl delete namespaces -l "$label=$id" --wait=false >/dev/null 2>&1
    kubectl -n gpustack-system delete lease "kvcache-rbench-$id" --ignore-not-found >/dev/null 2>&1
  fi
  "$root/test/store/store.sh" down "$store" >/dev/null 2>&1
  if [ "$own_cluster" = 1 ]; then
    "$root/test/cluster/cluster.sh" down "$cluster" --purge >/dev/null 2>&1
  fi
  log "logs and results in $work"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$cluster" ]; then
  cluster=$work/cluster
  own_cluster=1
  log "bringing up a private control plane in $cluster"
fi
# Fake nodes only: the controllers' cost is measured, and it can run beside a cluster with real nodes.
KVC_REAL_NODES=${KVC_REAL_NODES:-0} "$root/test/cluster/cluster.sh" up "$cluster" >"$work/cluster-up.log" 2>&1 ||
  { cat "$work/cluster-up.log" >&2; exit 1; }
# shellcheck disable=SC1091
. "$cluster/env"
export KUBECONFIG
log "starting a Mooncake master with 2 members x 256 MiB in $store"
"$root/test/store/store.sh" --members 2 --segment 256MiB up "$store" >"$work/store-up.log" 2>&1 ||
  { cat "$work/store-up.log" >&2; exit 1; }
# shellcheck disable=SC1091
. "$store/env"

kubectl apply --server-side -k "$root/deploy/crds" >/dev/null
kubectl wait --for=condition=Established --timeout=60s \
  crd/kvcachebackends.worker.gpustack.ai crd/kvcachepools.worker.gpustack.ai \
  crd/kvcachepoolbindings.worker.gpustack.ai >/dev/null
kubectl create namespace gpustack-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null

# shellcheck source=test/cluster/lib.sh
. "$root/test/cluster/lib.sh"  # kvc_free_port
port=$(kvc_free_port)
# Its own Lease and selector: on a shared cluster it neither waits for another operator's Lease
# nor touches another run's objects.
# shellcheck disable=SC2086
setsid "$kvcache" operator --kubeconfig "$KUBECONFIG" --selector "$label=$id" \
  --lease-name "kvcache-rbench-$id" --identity "rbench-$id" --webhook-port 0 \
  --health-addr "127.0.0.1:$port" --metrics-addr "127.0.0.1:$port" --log-level info \
  ${KVC_OPERATOR_ARGS:-} </dev/null >"$work/operator.log" 2>&1 &
operator_pid=$!
leading() {  # ready, and holding its Lease (grep on a saved page: no SIGPIPE under pipefail)
  local page
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 || return 1
  page=$(curl -sf "http://127.0.0.1:$port/metrics" 2>/dev/null) || return 1
  grep -q '^leader_election_master_status{.*} 1' <<<"$page"
}
for _ in $(seq 60); do
  kill -0 "$operator_pid" 2>/dev/null || { log "the operator exited:"; tail -n 40 "$work/operator.log" >&2; exit 1; }
  leading && break
  sleep 1
done
leading || { log "the operator did not become ready and leader:"; tail -n 40 "$work/operator.log" >&2; exit 1; }
log "operator pid $operator_pid (metrics on 127.0.0.1:$port), run id $id; the bench starts"

cleanup_flag=()
[ "$own_cluster" = 0 ] && cleanup_flag=(--cleanup)
# In the background, so that an interrupt reaches the trap (and stops it) at once.
"$bench" "${cleanup_flag[@]}" --kubeconfig "$KUBECONFIG" \
  --metrics-url "http://127.0.0.1:$port/metrics" --operator-pid "$operator_pid" \
  --store-admin "$KVC_STORE_ADMIN" --store-rpc "$KVC_STORE_RPC" --kvcache "$kvcache" \
  --run-id "$id" --json "$work/result.json" "$@" >"$work/result.txt" &
bench_pid=$!
wait "$bench_pid"
bench_pid=
grep -v '^RESULT ' "$work/result.txt"
grep -E ' (W|E) ' "$work/operator.log" | head -n 20 >"$work/operator-warnings.log" || true
if [ -s "$work/operator-warnings.log" ]; then
  log "warnings and errors in the operator's log ($(grep -cE ' (W|E) ' "$work/operator.log") lines; first ones in $work/operator-warnings.log)"
fi
