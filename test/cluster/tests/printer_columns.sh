#!/usr/bin/env bash
# `kubectl get kvcb,kvcp,kvcpb,md` prints the printer columns of the contract, and the columns read
# the status fields they name.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
ns=$(kvc_fresh_namespace columns)
sfx=$(date +%s)-$RANDOM
B=pc-kvcb-$sfx P=pc-kvcp-$sfx
kvc_register_cluster_object "kvcachebackend/$B"
kvc_register_cluster_object "kvcachepool/$P"

kvc_assert_ok "one object of each kind is created" kubectl apply --server-side --validate=strict -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: $B}
spec:
  connection:
    external:
      endpoints:
      - {name: Client, address: "127.0.0.1:50051"}
      - {name: Admin, address: "127.0.0.1:9003"}
---
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: $P}
spec: {backends: [$B], quota: {total: 16Gi}}
---
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: pcb, namespace: $ns}
spec:
  poolRef: {name: $P}
  quota: {ceiling: 8Gi}
  domain: {name: pc-domain, blockSize: 16, dtype: bfloat16}
---
apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata: {name: pcm, namespace: $ns}
spec:
  model: {name: Qwen/Qwen2.5-7B-Instruct}
  engine: {name: SGLang, version: "0.5.6"}
  roles: [{name: server}]
YAML

# Status as a controller would write it, through the status subresource.
kvc_assert_ok "backend status is written" kubectl patch kvcb "$B" --subresource=status --type=merge -p \
  '{"status":{"phase":"Ready","endpoints":[{"name":"Client","address":"127.0.0.1:50051"},{"name":"Admin","address":"127.0.0.1:9003"}],"capacity":{"total":"512Mi","used":"0"}}}'
kvc_assert_ok "pool status is written" kubectl patch kvcp "$P" --subresource=status --type=merge -p \
  '{"status":{"phase":"Ready","clientEndpoint":"127.0.0.1:50051","usage":{"total":"1Mi"}}}'
kvc_assert_ok "binding status is written" kubectl -n "$ns" patch kvcpb pcb --subresource=status --type=merge -p \
  '{"status":{"phase":"Ready","effectiveQuota":"8Gi","usage":"1Mi"}}'
kvc_assert_ok "modeldeployment status is written" kubectl -n "$ns" patch md pcm --subresource=status --type=merge -p \
  '{"status":{"phase":"Ready","endpoint":"pcm.'"$ns"'.svc:8000"}}'

out=$(kubectl -n "$ns" get kvcb,kvcp,kvcpb,md 2>&1)
printf '%s\n' "$out" | sed 's/^/    | /'
headers=$(printf '%s\n' "$out" | grep '^NAME' | tr -s ' ' | sed 's/ $//')
kvc_assert_eq "four tables are printed, one header each" "4" "$(printf '%s\n' "$headers" | grep -c .)"
kvc_assert_eq "KVCacheBackend columns" "NAME TYPE PHASE ENDPOINT CAPACITY AGE" "$(printf '%s\n' "$headers" | sed -n 1p)"
kvc_assert_eq "KVCachePool columns" "NAME QUOTA USAGE PHASE ENDPOINT AGE" "$(printf '%s\n' "$headers" | sed -n 2p)"
kvc_assert_eq "KVCachePoolBinding columns" "NAME POOL DOMAIN EFFECTIVE USAGE PHASE AGE" "$(printf '%s\n' "$headers" | sed -n 3p)"
kvc_assert_eq "ModelDeployment columns" "NAME ENGINE PHASE ENDPOINT" "$(printf '%s\n' "$headers" | sed -n 4p)"

row() { printf '%s\n' "$out" | grep -E "^$1 " | tr -s ' ' | cut -d' ' -f"$2"; }
kvc_assert_eq "backend row: name type phase endpoint capacity" \
  "kvcachebackend.worker.gpustack.ai/$B Mooncake Ready 127.0.0.1:50051 512Mi" "$(row "kvcachebackend.worker.gpustack.ai/$B" 1-5)"
kvc_assert_eq "pool row: name quota usage phase endpoint" \
  "kvcachepool.worker.gpustack.ai/$P 16Gi 1Mi Ready 127.0.0.1:50051" "$(row "kvcachepool.worker.gpustack.ai/$P" 1-5)"
kvc_assert_eq "binding row: name pool domain effective usage phase" \
  "kvcachepoolbinding.worker.gpustack.ai/pcb $P pc-domain 8Gi 1Mi Ready" "$(row kvcachepoolbinding.worker.gpustack.ai/pcb 1-6)"
kvc_assert_eq "modeldeployment row: name engine phase endpoint" \
  "modeldeployment.worker.gpustack.ai/pcm SGLang Ready pcm.$ns.svc:8000" "$(row modeldeployment.worker.gpustack.ai/pcm 1-4)"

kvc_assert_eq "kubectl get -A adds NAMESPACE before the Binding columns" "NAMESPACE NAME POOL DOMAIN EFFECTIVE USAGE PHASE AGE" \
  "$(kubectl get kvcpb -A 2>&1 | head -1 | tr -s ' ' | sed 's/ $//')"
for k in kvcb kvcp kvcpb md; do
  kvc_assert_contains "kubectl api-resources lists short name $k in category gpustack" "$k" \
    "$(kubectl api-resources --categories=gpustack -o wide 2>&1)"
done
kvc_done
