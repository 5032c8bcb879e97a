#!/usr/bin/env bash
# The UPDATE freeze through the API server, on a real injected Pod that kwok runs: the label and
# the two written annotations cannot be added, edited or removed — on a terminating Pod too — while
# everything else, finalizer removal included, is admitted. The same holds through pods/status,
# whose label and annotation changes the API server keeps, and through pods/binding, which copies
# a Binding's labels and annotations onto an unscheduled Pod; and a status write that moves none
# of the three keys never reaches the webhook (the matchCondition), kwok's own included.
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

# The freeze webhook's answers so far (the tests hold the webhook lock: nobody else's).
validate_calls() {
  local pages
  pages=$(kvc_operator_metrics) || { echo unreadable; return; }
  awk '/^kvcache_admission_requests_total\{.*webhook="validate-pod"/ {n += $NF} END {print n + 0}' <<<"$pages"
}
kvc_assert_refused "pods/status: editing the client-config is refused" \
  "kvcache.gpustack.ai/client-config" \
  kubectl -n "$ns" patch pod injected --subresource=status --type=merge \
  -p '{"metadata":{"annotations":{"kvcache.gpustack.ai/client-config":"{}"}}}'
kvc_assert_refused "pods/status: removing the label is refused" "$msg" \
  kubectl -n "$ns" patch pod injected --subresource=status --type=json \
  -p '[{"op":"remove","path":"/metadata/labels/kvcache.gpustack.ai~1inject"}]'
kvc_assert_refused "pods/status: adding the label to a never-injected Pod is refused" "$msg" \
  kubectl -n "$ns" patch pod plain --subresource=status --type=merge \
  -p '{"metadata":{"labels":{"kvcache.gpustack.ai/inject":"true"}}}'
kvc_wait_for 60 "kwok's status writes were admitted: the injected Pod runs" \
  bash -c "[ \"\$(kubectl -n $ns get pod injected -o jsonpath='{.status.phase}')\" = Running ]"
before=$(validate_calls) refused=0
for i in $(seq 1 20); do
  kubectl -n "$ns" patch pod injected --subresource=status --type=merge \
    -p "{\"status\":{\"message\":\"write $i\"},\"metadata\":{\"annotations\":{\"example.com/s\":\"$i\"}}}" \
    >/dev/null || refused=$((refused + 1))
done
kvc_assert_eq "20 status writes moving no frozen key: none refused" 0 "$refused"
kvc_assert_eq "20 status writes moving no frozen key: none reached the webhook" "$before" \
  "$(validate_calls)"

# pods/binding: only a Pod that is not yet scheduled can be bound.
cat <<YAML | kubectl create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  name: unscheduled
  namespace: $ns
  labels: {app: freeze, kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: canary, kvcache.gpustack.ai/engine: vLLM}
spec:
  nodeSelector: {example.com/nowhere: "true"}
  containers: [{name: server, image: vllm, command: [vllm], args: [serve]}]
YAML
bind() {  # bind METADATA-JSON: POST a Binding of the unscheduled Pod to the first node
  kubectl create --raw "/api/v1/namespaces/$ns/pods/unscheduled/binding" -f - <<JSON
{"apiVersion":"v1","kind":"Binding","metadata":$1,
 "target":{"apiVersion":"v1","kind":"Node","name":"${KVC_NODE_NAMES%% *}"}}
JSON
}
config=$(kubectl -n "$ns" get pod unscheduled -o jsonpath='{.metadata.annotations.kvcache\.gpustack\.ai/client-config}')
kvc_assert_refused "pods/binding: a Binding overwriting the client-config is refused" \
  "a Binding must not write it" \
  bind '{"name":"unscheduled","annotations":{"kvcache.gpustack.ai/client-config":"{\"master_server_address\":\"evil:1\"}"}}'
kvc_assert_refused "pods/binding: a Binding changing the label is refused" \
  "kvcache.gpustack.ai/inject" bind '{"name":"unscheduled","labels":{"kvcache.gpustack.ai/inject":"false"}}'
kvc_assert_ok "pods/binding: a plain Binding is admitted" \
  bind '{"name":"unscheduled","annotations":{"example.com/placed-by":"freeze-test"}}'
kvc_assert_eq "the bound Pod keeps the client-config the webhook wrote" "$config" \
  "$(kubectl -n "$ns" get pod unscheduled -o jsonpath='{.metadata.annotations.kvcache\.gpustack\.ai/client-config}')"

kubectl -n "$ns" delete pod injected --wait=false >/dev/null
kvc_assert_refused "terminating: swapping the client-config is refused" "$msg" \
  kubectl -n "$ns" annotate pod injected kvcache.gpustack.ai/client-config='{"master_server_address":"evil:1"}' --overwrite
kvc_assert_ok "terminating: clearing the finalizer is admitted" \
  kubectl -n "$ns" patch pod injected --type=merge -p '{"metadata":{"finalizers":null}}'
kubectl -n "$ns" patch pod plain --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
kvc_done
