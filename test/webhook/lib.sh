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
