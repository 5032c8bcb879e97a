#!/usr/bin/env bash
# A Pod without the label is untouched by this webhook: created through the API server with the
# webhooks registered, it is byte-identical (after API-server defaulting) to the same Pod
# created with the webhooks absent. Also a Pod labelled "false".
. "$(dirname "$0")/../../cluster/lib.sh"
. "$(dirname "$0")/../lib.sh"
kvc_init
# shellcheck disable=SC1091
. "$KVC_OPERATOR_DIR/operator.env"
ns=$(kvc_fresh_namespace untouched)
work=$(mktemp -d)
# The mutating configuration as installed (its caBundle included), put back after each removal
# and, whatever happens below, at exit for the tests that follow.
kubectl get mutatingwebhookconfiguration gpustack-worker-mutation -o json |
  jq 'del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.generation, .metadata.managedFields)' \
  >"$work/mutation.json"
register() {
  kubectl get mutatingwebhookconfiguration gpustack-worker-mutation >/dev/null 2>&1 ||
    kubectl create -f "$work/mutation.json" >/dev/null
  kvc_wait_for 60 "the webhook is back in the API server's path" kvc_canary_injected
}
trap 'register >/dev/null 2>&1; rm -rf "$work"; kvc_cleanup' EXIT
render() {  # render FILE: the Pod as the API server would create it, normalised
  local out
  out=$(kubectl create --dry-run=server -n "$ns" -o json -f "$work/pod.yaml") || return 1
  jq -S "$strip" <<<"$out" >"$1"
}
not_injected() { ! kvc_canary_injected; }
# Fields the API server generates anew for every create: identity, time, the service-account
# token volume's random suffix.
strip='del(.metadata.uid, .metadata.creationTimestamp) | walk(if type == "string" and startswith("kube-api-access-") then "kube-api-access" else . end)'
for label in none false; do
  cat >"$work/pod.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: plain
  labels: {app: plain$( [ "$label" = false ] && printf ', kvcache.gpustack.ai/inject: "false"')}
  annotations: {kvcache.gpustack.ai/binding: team-a, kvcache.gpustack.ai/engine: vLLM}
spec:
  containers: [{name: server, image: vllm, command: [vllm], args: [serve]}]
YAML
  render "$work/with.json" || _kvc_fail "label $label: created with the webhook" "kubectl failed"
  kubectl delete mutatingwebhookconfiguration gpustack-worker-mutation >/dev/null
  # The API server drops the webhook through an informer: wait until it no longer calls it.
  kvc_wait_for 60 "label $label: the webhook is out of the API server's path" not_injected
  render "$work/without.json" || _kvc_fail "label $label: created without the webhook" "kubectl failed"
  register
  kvc_assert_eq "label $label: both creates returned the Pod" "Pod Pod" \
    "$(jq -r .kind "$work/with.json" 2>/dev/null) $(jq -r .kind "$work/without.json" 2>/dev/null)"
  if cmp -s "$work/with.json" "$work/without.json"; then
    _kvc_pass "label $label: identical with and without the webhook"
  else
    _kvc_fail "label $label: the webhook changed an unlabelled Pod" "$(diff "$work/without.json" "$work/with.json" | head -20)"
  fi
done
kvc_done
