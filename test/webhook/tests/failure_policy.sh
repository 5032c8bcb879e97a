#!/usr/bin/env bash
# With the webhook unreachable — the in-cluster operator scaled to 0 replicas, so its Service has
# no endpoint — a labelled Pod is refused (mutating: failurePolicy Fail, fail closed) while updates
# of labelled Pods are admitted (validating: Ignore, fail open).
. "$(dirname "$0")/../../cluster/lib.sh"
. "$(dirname "$0")/../lib.sh"
kvc_init
# shellcheck disable=SC1091
. "$KVC_OPERATOR_DIR/operator.env"
ns=$(kvc_fresh_namespace failpolicy)
kvc_canary_binding "$ns"
pod() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $ns
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: canary, kvcache.gpustack.ai/engine: vLLM}
spec:
  containers: [{name: server, image: vllm, command: [vllm], args: [serve]}]
YAML
}
pod before | kubectl create -f - >/dev/null
# No replica: nothing answers behind the Service, the webhook is down.
kvc_assert_ok "the operator is scaled to 0 replicas" \
  "$KVC_REPO_DIR/test/webhook/operator.sh" scale "$KVC_OPERATOR_DIR" 0
work=$(mktemp -d)
pod down >"$work/down.yaml"
pod after >"$work/after.yaml"
down_refused() {
  ! kubectl create --dry-run=server -f "$work/down.yaml" >/dev/null 2>"$work/err" &&
    grep -q 'failed calling webhook' "$work/err"
}
kvc_wait_for 60 "a labelled Pod is refused while the webhook is down (fail closed)" down_refused
kvc_assert_ok "an update of a labelled Pod is admitted while the webhook is down (fail open)" \
  kubectl -n "$ns" annotate pod before kvcache.gpustack.ai/injected='{"forged":true}' --overwrite
kvc_assert_ok "the operator is scaled back to 2 replicas" \
  "$KVC_REPO_DIR/test/webhook/operator.sh" scale "$KVC_OPERATOR_DIR" 2
injected_again() {
  kubectl create --dry-run=server -o json -f "$work/after.yaml" | grep -q kvcache.gpustack.ai/injected
}
kvc_assert_ok "with the webhook back, labelled Pods are injected again" injected_again
rm -rf "$work"
kvc_done
