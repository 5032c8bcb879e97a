# shellcheck shell=bash
# Helpers of the webhook integration tests (on top of test/cluster/lib.sh).

# kvc_canary_binding NS: a KVCachePoolBinding "canary" in NS on the canary pool that
# test/webhook/operator.sh set up (an external backend, ledger available).
kvc_canary_binding() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: canary, namespace: $1}
spec:
  poolRef: {name: kvcache-canary}
  quota: {ceiling: 1Gi}
  domain: {name: canary, blockSize: 16, dtype: bfloat16}
YAML
}

# kvc_canary_injected [NAME]: a labelled Pod NAME (default kvcache-canary) in the canary
# namespace, created with --dry-run=server, comes back injected: the API server reaches the
# webhook and the webhook resolves the canary Binding.
kvc_canary_injected() {
  kubectl create --dry-run=server -o json -f - <<YAML 2>/dev/null | grep -q 'kvcache.gpustack.ai/injected'
apiVersion: v1
kind: Pod
metadata:
  name: ${1:-kvcache-canary}
  namespace: kvcache-canary
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: canary, kvcache.gpustack.ai/engine: vLLM}
spec:
  containers: [{name: c, image: x, command: [vllm], args: [serve]}]
YAML
}

# kvc_webhook_answers: the API server reaches the Pod webhook and the webhook answers, shown by
# its refusal of a labelled Pod naming a Binding that does not exist (dry-run, namespace
# default). Needs no cluster state of its own.
kvc_webhook_answers() {
  local pod out
  pod='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"kvcache-readiness-probe",
    "namespace":"default","labels":{"kvcache.gpustack.ai/inject":"true"},
    "annotations":{"kvcache.gpustack.ai/binding":"kvcache-readiness-probe",
    "kvcache.gpustack.ai/engine":"vLLM"}},"spec":{"containers":[{"name":"c","image":"x",
    "command":["vllm"],"args":["serve"]}]}}'
  out=$(kubectl create --dry-run=server -o json -f - <<<"$pod" 2>&1) || true
  [[ $out == *'admission webhook "mutate.gpustack-worker-kvcache.core.v1.pod"'*kvcache-readiness-probe* ]]
}

# kvc_operator_metrics: the /metrics pages of every replica of the in-cluster operator, one after
# the other (a counter summed over them is the operator's); fails unless every replica answered
# with the admission counters, so a check on them can never read an unreachable page as 0.
kvc_operator_metrics() {
  local ip page n=0
  for ip in $(kubectl -n gpustack-system get pods -l app.kubernetes.io/name=kvcache-operator \
      --field-selector status.phase=Running -o jsonpath='{.items[*].status.podIP}'); do
    page=$(curl -sf --max-time 3 "http://$ip:8080/metrics") || return 1
    grep -q '^kvcache_admission_requests_total' <<<"$page" || return 1
    printf '%s\n' "$page"
    n=$((n + 1))
  done
  [ "$n" -gt 0 ]
}
