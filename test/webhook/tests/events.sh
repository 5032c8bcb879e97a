#!/usr/bin/env bash
# Injections and refusals are reported as Events on the owning workload (the Deployment behind a
# ReplicaSet), and nothing is recorded for a dry-run.
. "$(dirname "$0")/../../cluster/lib.sh"
. "$(dirname "$0")/../lib.sh"
kvc_init
# shellcheck disable=SC1091
. "$KVC_OPERATOR_DIR/operator.env"
ns=$(kvc_fresh_namespace events)
kvc_canary_binding "$ns"
deployment() {  # deployment NAME COMMAND
  cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1, namespace: $ns}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
  template:
    metadata:
      labels: {app: $1, kvcache.gpustack.ai/inject: "true"}
      annotations: {kvcache.gpustack.ai/binding: canary, kvcache.gpustack.ai/engine: vLLM}
    spec:
      containers: [{name: server, image: vllm, command: [$2], args: [serve]}]
YAML
}
deployment good vllm | kubectl apply -f - >/dev/null
deployment bad gosu | kubectl apply -f - >/dev/null
event_on() {  # event_on KIND NAME REASON
  kubectl -n "$ns" get events.events.k8s.io -o json |
    jq -e --arg k "$1" --arg n "$2" --arg r "$3" \
      '[.items[] | select(.regarding.kind == $k and .regarding.name == $n and .reason == $r)] | length > 0' >/dev/null
}
kvc_wait_for 60 "Deployment good has a KVCacheInjected Event" event_on Deployment good KVCacheInjected
kvc_wait_for 60 "Deployment bad has a KVCacheInjectionRefused Event" event_on Deployment bad KVCacheInjectionRefused
note=$(kubectl -n "$ns" get events.events.k8s.io -o json |
  jq -r '[.items[] | select(.regarding.name == "bad" and .reason == "KVCacheInjectionRefused")][0].note')
kvc_assert_contains "the refusal Event names the reason and the fix" "UnrecognisedLauncher" "$note"
dry=$(kubectl create --dry-run=server -n "$ns" -o json -f - <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: dry
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: canary, kvcache.gpustack.ai/engine: vLLM}
spec:
  containers: [{name: c, image: x, command: [vllm], args: [serve]}]
YAML
)
kvc_assert_eq "the dry-run went through the webhook and came back injected" "true" \
  "$(jq '.metadata.annotations | has("kvcache.gpustack.ai/injected")' <<<"$dry")"
# Events are sent in order by one queue: once a later injection's Event is there, a dry-run
# Event would be too.
deployment later vllm | kubectl apply -f - >/dev/null
kvc_wait_for 60 "Deployment later has a KVCacheInjected Event" event_on Deployment later KVCacheInjected
kvc_assert_eq "no Event for a dry-run" "false" \
  "$(kubectl -n "$ns" get events.events.k8s.io -o json | jq '[.items[] | select(.regarding.name == "dry")] | length > 0')"
kvc_done
