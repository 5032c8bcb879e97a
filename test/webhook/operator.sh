#!/usr/bin/env bash
# The operator the webhook and quota suites run against: installed in-cluster from deploy/ the
# way a user installs it (deploy/overlays/local/install.sh: this build's images on the real nodes,
# two replicas, its own RBAC, its webhooks reached through its Service with the certificate it
# manages), plus the test overlay below.
#
#   operator.sh up KVCACHE_BINARY DIR   install; set up the readiness canary; writes DIR/operator.env
#   operator.sh down DIR                uninstall, and put back gpustack-system and the CRDs
#   operator.sh scale DIR N             N replicas (0: the webhooks are unreachable); waits for them
#   operator.sh rotate DIR              delete the certificate Secret: the replicas issue a new CA
#                                       and serving certificate and patch the caBundles
#
# The test overlay (DIR/overlay-test, on top of the pinned local overlay): the controllers reconcile
# only objects labelled kvcache-test.gpustack.ai/reconcile=true, so that the hand-written statuses
# of the canary and of the golden corpus stay as written; the pool, Binding and backend validation
# applies only to objects labelled kvcache-test.gpustack.ai/validate=true, because other suites on
# this control plane create objects it would rightly refuse (a Binding whose pool does not exist,
# the corpus's deliberately broken cluster states). The quota suites label theirs.
#
# Needs the cluster environment: KVC_CLUSTER_DIR (with env and KUBECONFIG) and real nodes.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
step=${1:?usage: operator.sh up|down|scale|rotate ...}
log() { printf '[operator.sh %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [ "${KVC_SKIP_INTEGRATION:-0}" = 1 ]; then
  echo "*** SKIPPED: operator fixture '$step' — KVC_SKIP_INTEGRATION=1 is set ***"
  exit 77
fi
# shellcheck disable=SC1091
. "${KVC_CLUSTER_DIR:?KVC_CLUSTER_DIR is required}/env"
# shellcheck source=test/webhook/lib.sh
. "$HERE/lib.sh"
SYS=gpustack-system

if [ -z "${KVC_REAL_NODE_NAMES:-}" ]; then
  echo "*** SKIPPED: operator fixture '$step' — the in-cluster operator needs real nodes (this cluster was started with KVC_REAL_NODES=0) ***"
  exit 77
fi

# test_overlay DIR: DIR/overlay-test on top of DIR/overlay (written by install.sh).
test_overlay() {
  local dir=$1 entry
  mkdir -p "$dir/overlay-test"
  {
    cat <<'KUSTOMIZATION'
# The in-cluster operator of the webhook and quota suites (test/webhook/operator.sh).
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
sortOptions: {order: fifo}
resources: [../overlay]
patches:
  - target: {kind: Deployment, name: kvcache-operator, namespace: gpustack-system}
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/args/-
        value: --selector=kvcache-test.gpustack.ai/reconcile=true
  - target: {kind: ValidatingWebhookConfiguration, name: gpustack-worker-validation}
    patch: |-
      apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingWebhookConfiguration
      metadata: {name: gpustack-worker-validation}
      webhooks:
KUSTOMIZATION
    for entry in kvcachepool kvcachepoolbinding kvcachebackend; do
      cat <<ENTRY
        - name: validate.gpustack-worker-kvcache.worker.v1.$entry
          objectSelector: {matchLabels: {kvcache-test.gpustack.ai/validate: "true"}}
ENTRY
    done
  } >"$dir/overlay-test/kustomization.yaml"
}

case $step in
  up)
    binary=${2:?usage: operator.sh up KVCACHE_BINARY DIR}
    dir=${3:?usage: operator.sh up KVCACHE_BINARY DIR}
    mkdir -p "$dir"
    # The install writes DIR/overlay (pinned) and applies the test overlay on top of it.
    test_overlay "$dir"
    "$ROOT/deploy/overlays/local/install.sh" "$binary" "$dir" "$dir/overlay-test"
    # The canary's cluster state: a Binding whose pool and backend resolve (not reconciled).
    kubectl create namespace kvcache-canary --dry-run=client -o yaml | kubectl apply -f - >/dev/null
    "$HERE/apply-with-status.sh" "$HERE/canary-cluster.yaml"
    cat >"$dir/operator.env" <<ENV
KVC_OPERATOR_DIR=$dir
KVC_OPERATOR_BINARY=$binary
KVC_OPERATOR_NAMESPACE=$SYS
ENV
    for _ in $(seq 1 120); do
      kvc_canary_injected && { log "the in-cluster operator injects the canary"; exit 0; }
      sleep 1
    done
    log "the canary was never injected; operator logs:"
    kubectl -n "$SYS" logs deploy/kvcache-operator --tail=40 >&2 || true
    exit 1 ;;
  down)
    dir=${2:?usage: operator.sh down DIR}
    [ -d "$dir/overlay-test" ] || exit 0
    # The canary's objects first (their master does not exist, so only their finalizers stand
    # in the way), then every other object of our kinds the suites left, then the install.
    "$HERE/apply-with-status.sh" --delete "$HERE/canary-cluster.yaml" >/dev/null 2>&1 || true
    kubectl delete namespace kvcache-canary --ignore-not-found --wait=false >/dev/null 2>&1 || true
    kubectl delete -k "$dir/overlay-test" --wait=true --timeout=240s >/dev/null 2>&1 || true
    rm -rf "$dir/overlay-test" "$dir/overlay" "$dir/operator.env"
    # What the shared cluster had before: gpustack-system (its Pods on the real nodes), the CRDs;
    # once the old namespace is gone, not while it terminates.
    for _ in $(seq 1 180); do kubectl get namespace "$SYS" >/dev/null 2>&1 || break; sleep 1; done
    kubectl create namespace "$SYS" >/dev/null 2>&1 &&
      kubectl annotate namespace "$SYS" scheduler.alpha.kubernetes.io/node-selector=type=real >/dev/null
    bash "$ROOT/test/cluster/fixture.sh" crds "$KVC_CLUSTER_DIR" >/dev/null ;;
  scale)
    dir=${2:?usage: operator.sh scale DIR N}
    n=${3:?usage: operator.sh scale DIR N}
    kubectl -n "$SYS" scale deploy/kvcache-operator --replicas="$n" >/dev/null
    if [ "$n" = 0 ]; then
      for _ in $(seq 1 90); do
        [ -z "$(kubectl -n "$SYS" get pods -l app.kubernetes.io/name=kvcache-operator -o name)" ] && exit 0
        sleep 1
      done
      log "operator Pods are still there"; exit 1
    fi
    kubectl -n "$SYS" rollout status deploy/kvcache-operator --timeout=180s >&2
    for _ in $(seq 1 120); do kvc_canary_injected && exit 0; sleep 1; done
    log "the canary was never injected after scaling to $n"; exit 1 ;;
  rotate)
    dir=${2:?usage: operator.sh rotate DIR}
    kubectl -n "$SYS" delete secret kvcache-operator-webhook-tls >/dev/null ;;
  *) echo "unknown step '$step'" >&2; exit 2 ;;
esac
