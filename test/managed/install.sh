#!/usr/bin/env bash
# The in-cluster operator of the managed-backend suite.
#
#   install.sh up KVCACHE-BINARY   deploy/overlays/local/install.sh into $KVC_MANAGED_DIR: this
#                                  build's images, the overlay pinned to them, the rollout
#   install.sh down                every object of our kinds deleted while the operator can still
#                                  release them, then `kubectl delete -k`; gpustack-system and the
#                                  CRDs put back for whatever runs next on the shared cluster
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
step=${1:?usage: install.sh up KVCACHE-BINARY | down}
if [ "${KVC_SKIP_INTEGRATION:-0}" = 1 ]; then
  echo "*** SKIPPED: managed.install '$step' — KVC_SKIP_INTEGRATION=1 is set ***"
  exit 77
fi
# shellcheck disable=SC1091
. "${KVC_CLUSTER_DIR:?KVC_CLUSTER_DIR is required}/env"
if [ -z "${KVC_REAL_NODE_NAMES:-}" ]; then
  echo "*** SKIPPED: managed.install '$step' — this cluster has no real nodes ***"
  exit 77
fi
state=${KVC_MANAGED_DIR:?KVC_MANAGED_DIR is required}
log() { printf '[managed/install.sh %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

case $step in
  up)
    kvcache=${2:?usage: install.sh up KVCACHE-BINARY}
    exec "$root/deploy/overlays/local/install.sh" "$kvcache" "$state" ;;
  down)
    [ -d "$state/overlay" ] || exit 0
    log "deleting every object of our kinds, then the install"
    kubectl delete kvcachepoolbindings --all -A --timeout=180s >/dev/null 2>&1
    kubectl delete kvcachepools,kvcachebackends --all --timeout=300s >/dev/null 2>&1
    kubectl delete -k "$state/overlay" --wait=true --timeout=240s >/dev/null 2>&1
    rm -rf "$state/overlay"
    for _ in $(seq 1 180); do kubectl get namespace gpustack-system >/dev/null 2>&1 || break; sleep 1; done
    kubectl create namespace gpustack-system >/dev/null 2>&1 &&
      kubectl annotate namespace gpustack-system scheduler.alpha.kubernetes.io/node-selector=type=real >/dev/null
    bash "$root/test/cluster/fixture.sh" crds "$KVC_CLUSTER_DIR" >/dev/null
    log "uninstalled" ;;
  *) echo "unknown step '$step'" >&2; exit 2 ;;
esac
