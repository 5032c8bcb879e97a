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
# Whatever happens below, the webhooks are registered again for the tests that follow.
trap '"$KVC_REPO_DIR/test/webhook/operator.sh" register "$KVC_OPERATOR_DIR" >/dev/null 2>&1' EXIT
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
  "$KVC_REPO_DIR/test/webhook/operator.sh" register "$KVC_OPERATOR_DIR"
  kvc_assert_eq "label $label: both creates returned the Pod" "Pod Pod" \
    "$(jq -r .kind "$work/with.json" 2>/dev/null) $(jq -r .kind "$work/without.json" 2>/dev/null)"
  if cmp -s "$work/with.json" "$work/without.json"; then
    _kvc_pass "label $label: identical with and without the webhook"
  else
    _kvc_fail "label $label: the webhook changed an unlabelled Pod" "$(diff "$work/without.json" "$work/with.json" | head -20)"
  fi
done
rm -rf "$work"
kvc_done
