#!/usr/bin/env bash
# ctest fixture steps around cluster.sh (see CMakeLists.txt):
#   fixture.sh up DIR     bring up (or reuse) the shared cluster of this ctest run
#   fixture.sh crds DIR   install deploy/crds/ and wait for them to be Established
#   fixture.sh down DIR   stop it again (kept running when KVC_KEEP_CLUSTER=1)
# KVC_SKIP_INTEGRATION=1 skips loudly (exit 77, which ctest reports as Skipped).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
step=${1:?usage: fixture.sh up|crds|down DIR}
DIR=${2:?usage: fixture.sh up|crds|down DIR}
if [ "${KVC_SKIP_INTEGRATION:-0}" = 1 ]; then
  echo "*** SKIPPED: cluster fixture '$step' — KVC_SKIP_INTEGRATION=1 is set, so no control plane runs and the integration tests do not run ***"
  exit 77
fi
case $step in
  up)
    "$HERE/cluster.sh" up "$DIR"
    "$HERE/cluster.sh" status "$DIR" ;;
  crds)
    # shellcheck disable=SC1091
    . "$DIR/env"
    CRDS=$(cd "$HERE/../../deploy/crds" && pwd)
    kubectl apply --server-side --force-conflicts -k "$CRDS"
    kubectl wait --for=condition=Established --timeout=60s \
      crd/kvcachebackends.worker.gpustack.ai crd/kvcachepools.worker.gpustack.ai \
      crd/kvcachepoolbindings.worker.gpustack.ai crd/modeldeployments.worker.gpustack.ai
    # Discovery must serve the new kinds before kubectl can resolve their short names.
    for _ in $(seq 1 30); do
      kubectl api-resources --api-group=worker.gpustack.ai -o name 2>/dev/null | grep -q modeldeployments && break
      sleep 1
    done
    kubectl api-resources --api-group=worker.gpustack.ai ;;
  down)
    if [ "${KVC_KEEP_CLUSTER:-0}" = 1 ]; then
      echo "KVC_KEEP_CLUSTER=1: leaving the cluster in $DIR running (stop it: $HERE/cluster.sh down $DIR)"
      exit 0
    fi
    "$HERE/cluster.sh" down "$DIR" ;;
  *) echo "unknown step '$step'" >&2; exit 2 ;;
esac
