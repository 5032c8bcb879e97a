#!/usr/bin/env bash
# The Pod webhook on objects whose status only the controllers wrote, and Pods holding Bindings:
#   - a vLLM Pod and an SGLang Pod injected against a controller-reconciled Binding; a store
#     client (the wheel's Python client) started with the values the webhook wrote — the vLLM
#     file's master and tenant, SGLang's MOONCAKE_MASTER / MOONCAKE_TENANT_ID — writes into the
#     store under the Binding's tenant, while an unregistered tenant fails TENANT_NOT_REGISTERED;
#   - a labelled Pod naming a deleting Binding holds it (Releasable=False/HeldByWorkloads, the
#     tenant stays in the ledger) until the Pod is gone;
#   - a Pod created in the same instant as its Binding's deletion ends either refused or holding
#     the Binding — never injected against a released tenant.
. "$(dirname "$0")/../lib.sh"
kvc_quota_init
kvc_store_up main --members 2 --segment 256MiB
backend=ext-$KVC_ID pool=pool-$KVC_ID ns=$(kvc_fresh_namespace pods)
kvc_external_backend "$backend"
kvc_pool "$pool" "$backend" 1Gi >/dev/null
kvc_binding "$ns" chat "$pool" 256Mi "chat-$KVC_ID" >/dev/null
kvc_wait_for 30 "the Binding is Ready (status written by the controllers only)" \
  kvc_phase_is kvcpb "$ns/chat" Ready

pod() {  # NAME BINDING ENGINE
  local cmd='command: [vllm], args: [serve, --model, Qwen/Qwen3-8B]'
  [ "$3" = SGLang ] && cmd='command: [python3, -m, sglang.launch_server], args: [--model-path, Qwen/Qwen3-8B]'
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $ns
  labels: {kvcache.gpustack.ai/inject: "true"}
  annotations: {kvcache.gpustack.ai/binding: $2, kvcache.gpustack.ai/engine: $3}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{name: server, image: engine:latest, $cmd}]
YAML
}

# vLLM: the projected file's values.
pod vllm-chat chat vLLM | kubectl create -f - >/dev/null
config=$(kubectl -n "$ns" get pod vllm-chat -o json | jq -r '.metadata.annotations["kvcache.gpustack.ai/client-config"]')
master=$(jq -r .master_server_address <<<"$config") tenant=$(jq -r .tenant_id <<<"$config")
kvc_assert_eq "the vLLM file points at the pool's endpoint" "$STORE_RPC" "$master"
kvc_assert_eq "with the Binding's domain as tenant" "chat-$KVC_ID" "$tenant"
STORE_RPC_SAVED=$STORE_RPC
STORE_RPC=$master
kvc_assert_eq "a client with the vLLM Pod's values writes under its tenant" 0 "$(kvc_write "$tenant" from-vllm)"
# SGLang: the environment.
env=$(kubectl create --dry-run=server -o json -f <(pod sglang-chat chat SGLang) |
  jq -r '.spec.containers[0].env | map({(.name): (.value // "")}) | add')
STORE_RPC=$(jq -r .MOONCAKE_MASTER <<<"$env")
kvc_assert_eq "a client with the SGLang Pod's environment writes under its tenant" 0 \
  "$(kvc_write "$(jq -r .MOONCAKE_TENANT_ID <<<"$env")" from-sglang)"
kvc_assert_eq "a tenant the ledger does not hold is refused (TENANT_NOT_REGISTERED)" -1701 \
  "$(kvc_write "nobody-$KVC_ID" nope)"
STORE_RPC=$STORE_RPC_SAVED
kvc_wait_for 45 "the Binding reports the usage the writes charged" \
  bash -c "[ \"\$(kubectl -n $ns get kvcpb chat -o jsonpath='{.status.usage}')\" != 0 ]"
curl -sf -X POST "http://$STORE_ADMIN/api/v1/remove_all?force=true&tenant_id=chat-$KVC_ID" >/dev/null

# A Pod holds its Binding.
kubectl -n "$ns" delete kvcpb chat --wait=false >/dev/null
sleep 15  # past the admission window
kvc_assert_eq "a Pod naming it holds the deleting Binding" False/HeldByWorkloads \
  "$(kvc_cond kvcpb "$ns/chat" Releasable)"
kvc_assert_contains "and is named" "Pod/vllm-chat" "$(kvc_jq kvcpb "$ns/chat" .status.phaseMessage)"
kvc_assert_contains "the tenant stays in the ledger" "chat-$KVC_ID=" "$(kvc_ledger)"
kubectl -n "$ns" delete pod vllm-chat --wait=true >/dev/null
kvc_wait_for 60 "once the Pod is gone the Binding is released" kvc_gone kvcpb "$ns/chat"
case " $(kvc_ledger) " in
  *" chat-$KVC_ID="*) _kvc_fail "the tenant left the ledger" "$(kvc_ledger)" ;;
  *) _kvc_pass "the tenant left the ledger" ;;
esac

# The race: a Pod created in the same instant its Binding is deleted.
refused=0 held=0
for i in 1 2 3 4 5; do
  kvc_binding "$ns" "race-$i" "$pool" 64Mi "race-$i-$KVC_ID" >/dev/null
  kvc_wait_for 30 "race-$i is Ready" kvc_phase_is kvcpb "$ns/race-$i" Ready >/dev/null
  pod "racer-$i" "race-$i" vLLM >"/tmp/kvc-racer-$KVC_ID.yaml"
  # The delete goes 0, 40, 80, 120, 160 ms after the create starts: both outcomes occur.
  (sleep "0.$(( (i - 1) * 4 ))"; kubectl -n "$ns" delete kvcpb "race-$i" --wait=false >/dev/null) &
  kubectl create -f "/tmp/kvc-racer-$KVC_ID.yaml" >/dev/null 2>"/tmp/kvc-racer-$KVC_ID.err" &
  wait
  if kubectl -n "$ns" get pod "racer-$i" >/dev/null 2>&1; then
    held=$((held + 1))
    # Injected: it must hold the Binding and its tenant until it goes.
    sleep 13
    if [ "$(kvc_cond kvcpb "$ns/race-$i" Releasable)" = False/HeldByWorkloads ] &&
       [[ " $(kvc_ledger) " == *" race-$i-$KVC_ID="* ]]; then
      _kvc_pass "race $i: the Pod was admitted and holds the Binding and its tenant"
    else
      _kvc_fail "race $i: an admitted Pod does not hold its Binding" \
        "Releasable: $(kvc_cond kvcpb "$ns/race-$i" Releasable)" "ledger: $(kvc_ledger)"
    fi
    kubectl -n "$ns" delete pod "racer-$i" --wait=true >/dev/null
  else
    refused=$((refused + 1))
    msg=$(cat "/tmp/kvc-racer-$KVC_ID.err")
    if [[ $msg == *"is being deleted"* || $msg == *"does not exist"* ]]; then
      _kvc_pass "race $i: the Pod was refused (the Binding is being deleted)"
    else
      _kvc_fail "race $i: refused for another reason" "$msg"
    fi
  fi
  kvc_wait_for 60 "race $i: the Binding is released in the end" kvc_gone kvcpb "$ns/race-$i" >/dev/null
done
rm -f "/tmp/kvc-racer-$KVC_ID.yaml" "/tmp/kvc-racer-$KVC_ID.err"
kvc_log "race outcomes: $held admitted and holding, $refused refused"
kvc_done
