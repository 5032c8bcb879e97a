#!/usr/bin/env bash
# The UPDATE freeze through the API server, on a real injected Pod that kwok runs: the label and
# the two written annotations cannot be added, edited or removed — on a terminating Pod too — while
# everything else, finalizer removal included, is admitted.
. "$(dirname "$0")/../../cluster/lib.sh"
. "$(dirname "$0")/../lib.sh"
kvc_init
# shellcheck disable=SC1091
. "$KVC_OPERATOR_DIR/operator.env"
ns=$(kvc_fresh_namespace freeze)
kvc_canary_binding "$ns"

pod() {  # pod NAME LABEL-VALUE
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $ns
  labels: {app: freeze, kvcache.gpustack.ai/inject: "$2"}
  annotations: {kvcache.gpustack.ai/binding: canary, kvcache.gpustack.ai/engine: vLLM}
  finalizers: [example.com/hold]
spec:
  containers: [{name: server, image: vllm, command: [vllm], args: [serve]}]
YAML
}
pod injected true | kubectl create -f - >/dev/null
pod plain false | kubectl create -f - >/dev/null
kvc_assert_contains "the Pod was injected at CREATE" '"tenantInjected":true' \
  "$(kubectl -n "$ns" get pod injected -o jsonpath='{.metadata.annotations.kvcache\.gpustack\.ai/injected}')"
msg='let the Pod be replaced'
kvc_assert_refused "adding the label to a never-injected Pod" "$msg" \
  kubectl -n "$ns" label pod plain kvcache.gpustack.ai/inject=true --overwrite
kvc_assert_refused "changing the label to false" "$msg" \
  kubectl -n "$ns" label pod injected kvcache.gpustack.ai/inject=false --overwrite
kvc_assert_refused "removing the label" "$msg" \
  kubectl -n "$ns" label pod injected kvcache.gpustack.ai/inject-
kvc_assert_refused "editing the record" "kvcache.gpustack.ai/injected" \
  kubectl -n "$ns" annotate pod injected kvcache.gpustack.ai/injected='{"binding":"x"}' --overwrite
kvc_assert_refused "removing the client-config" "kvcache.gpustack.ai/client-config" \
  kubectl -n "$ns" annotate pod injected kvcache.gpustack.ai/client-config-
kvc_assert_refused "stripping all three names all three" "kvcache.gpustack.ai/client-config" \
  kubectl -n "$ns" patch pod injected --type=json -p '[
    {"op":"remove","path":"/metadata/labels/kvcache.gpustack.ai~1inject"},
    {"op":"remove","path":"/metadata/annotations/kvcache.gpustack.ai~1injected"},
    {"op":"remove","path":"/metadata/annotations/kvcache.gpustack.ai~1client-config"}]'
kvc_assert_ok "other labels and annotations are admitted" \
  kubectl -n "$ns" annotate pod injected example.com/note=hello --overwrite
kvc_assert_ok "input annotations are admitted" \
  kubectl -n "$ns" annotate pod injected kvcache.gpustack.ai/engine=SGLang --overwrite
kvc_assert_ok "a forged record on a Pod that never opted in is admitted" \
  kubectl -n "$ns" annotate pod plain kvcache.gpustack.ai/injected='{}' --overwrite

kubectl -n "$ns" delete pod injected --wait=false >/dev/null
kvc_assert_refused "terminating: swapping the client-config is refused" "$msg" \
  kubectl -n "$ns" annotate pod injected kvcache.gpustack.ai/client-config='{"master_server_address":"evil:1"}' --overwrite
kvc_assert_ok "terminating: clearing the finalizer is admitted" \
  kubectl -n "$ns" patch pod injected --type=merge -p '{"metadata":{"finalizers":null}}'
kubectl -n "$ns" patch pod plain --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
kvc_done
