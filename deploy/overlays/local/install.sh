#!/usr/bin/env bash
# Installs kvcache-operator into the local cluster the way scripts/run.sh and the in-cluster test
# fixtures do, as a user would on theirs: the operator and store images built from KVCACHE-BINARY
# (images/build.sh, cached by content) and imported into the real nodes; this overlay pinned to
# them (pin.sh: the operator image, and the Setting kv-cache-backend-image for managed backends);
# `kubectl apply --server-side -k`; the rollout; and the webhooks answering through the Service.
# Writes STATE-DIR/images.env (the KVC_IMAGE_* references) and STATE-DIR/overlay. With APPLY-DIR,
# that kustomization is applied instead: one built on STATE-DIR/overlay (the test suites' own).
#
# usage: install.sh KVCACHE-BINARY STATE-DIR [APPLY-DIR]   (needs KVC_CLUSTER_DIR)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
kvcache=${1:?usage: install.sh KVCACHE-BINARY STATE-DIR}
state=${2:?usage: install.sh KVCACHE-BINARY STATE-DIR}
apply=${3:-$state/overlay}
# shellcheck disable=SC1091
. "${KVC_CLUSTER_DIR:?KVC_CLUSTER_DIR is required}/env"
log() { printf '[install.sh %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
mkdir -p "$state"

log "the operator and store images (cached by content), imported into the real nodes"
"$root/images/build.sh" --kvcache "$kvcache" operator store >"$state/images.env"
# shellcheck disable=SC1091
. "$state/images.env"
"$root/test/cluster/cluster.sh" load "$KVC_CLUSTER_DIR" "$KVC_IMAGE_OPERATOR_ARCHIVE" \
  "$KVC_IMAGE_STORE_ARCHIVE" >&2

log "kubectl apply --server-side -k $apply (deploy/overlays/local pinned to $KVC_IMAGE_OPERATOR_PINNED)"
"$here/pin.sh" "$state/overlay" "$KVC_IMAGE_OPERATOR_PINNED" "$KVC_IMAGE_STORE_PINNED"
kubectl apply --server-side --force-conflicts -k "$apply" >/dev/null
kubectl wait --for=condition=Established --timeout=60s crd --all >/dev/null
kubectl -n gpustack-system rollout status deploy/kvcache-operator --timeout=180s >&2
# The webhooks answer once the operator has written its CA into their caBundle (seconds). Five
# answers in a row: after a rollout the Service can still route to a replaced replica's address
# for a moment (no route to host), and one answer from the new one proves nothing about that.
answered=0
for _ in $(seq 1 120); do
  out=$(kubectl -n default run probe --dry-run=server --image=x \
    --labels=kvcache.gpustack.ai/inject=true 2>&1 || true)
  if grep -q 'failed calling webhook' <<<"$out"; then
    answered=0
  else
    answered=$((answered + 1))
    [ "$answered" -ge 5 ] && { log "the webhooks answer"; exit 0; }
  fi
  sleep 1
done
log "the webhooks never answered through the Service; operator logs:"
kubectl -n gpustack-system logs deploy/kvcache-operator --tail=40 >&2 || true
exit 1
