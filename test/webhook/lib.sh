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
