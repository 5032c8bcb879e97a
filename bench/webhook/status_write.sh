#!/usr/bin/env bash
# What the Pod freeze costs the kubelet's status writes: WRITES status writes (default 500) of a
# labelled (injected, so larger) Pod vs an unlabelled one, interleaved, through the real API
# server. Three times, the webhook configuration edited in place for each and restored on exit:
#   1. pods/status not registered: the difference is the larger object alone;
#   2. as deployed: the matchCondition sends only a write that moves a frozen key, so the API
#      server answers the rest after one CEL evaluation, without a webhook call;
#   3. the matchCondition taken out: every status write of the labelled Pod calls the webhook.
# The freeze's cost per status write is (2) - (1); what the condition saves is (3) - (2).
# Needs what pod_create.sh needs.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
writes=${1:-500}
config=gpustack-worker-validation
cmake --build "$build" --target bench_status_write >/dev/null
bench_wait_quiet
bench_namespace
saved=$(mktemp)
kubectl get validatingwebhookconfiguration "$config" -o json |
  jq 'del(.metadata.resourceVersion, .metadata.managedFields)' >"$saved"
trap 'kubectl replace -f "$saved" >/dev/null 2>&1 || true; rm -f "$saved";
      kubectl delete namespace "$ns" --wait=false >/dev/null' EXIT
# Two Pending Pods (no node matches): nothing but this bench writes their status.
for pod in labelled plain; do
  inject=false; [ $pod = labelled ] && inject=true
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $pod
  namespace: $ns
  labels: {app: bench, kvcache.gpustack.ai/inject: "$inject"}
  annotations: {kvcache.gpustack.ai/binding: bench, kvcache.gpustack.ai/engine: vLLM}
spec:
  nodeSelector: {example.com/nowhere: "true"}
  containers: [{name: server, image: vllm, command: [vllm], args: [serve]}]
YAML
done
index=$(jq '[.webhooks[].name] | index("validate.gpustack-worker-kvcache.core.v1.pod")' "$saved")
edit() {  # edit JSON-PATCH-OPS: change the freeze webhook in place
  kubectl patch validatingwebhookconfiguration "$config" --type=json -p "$1" >/dev/null
  sleep 2  # the API server reads webhook configurations through an informer
}
run() { echo "== $1"; "$build/bench/webhook/bench_status_write" "$KUBECONFIG" "$ns" labelled plain "$writes"; }
edit "[{\"op\":\"replace\",\"path\":\"/webhooks/$index/rules/0/resources\",\"value\":[\"pods\"]}]"
run "1. pods/status not registered (the larger object alone)"
kubectl replace -f "$saved" >/dev/null
sleep 2
run "2. as deployed (matchCondition: only a write moving a frozen key is sent)"
edit "[{\"op\":\"remove\",\"path\":\"/webhooks/$index/matchConditions\"}]"
run "3. without the matchCondition (every status write of the labelled Pod is sent)"
