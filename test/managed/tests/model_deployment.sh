#!/usr/bin/env bash
# ModelDeployments attached to a shared cache (the walkthrough's Steps 3 and 6, contract §8), with
# the operator installed in-cluster and Step 1's store on the real nodes; the engine Pods run on
# the fake GPU nodes (kwok), since no engine can run here.
#   - Step 3 as written: one Deployment qwen-chat-server with 2 replicas, phase Ready, and the
#     CacheAttached condition read from the deployment's own status, as the seed reads it;
#     status.kvCache echoes the Binding, the pool and the domain; the Binding lists the deployment
#     in status.usedBy;
#   - the role's client configuration is exactly what the Pod webhook writes for the same Binding
#     and engine (a labelled Pod injected beside it);
#   - Step 6's fp8 deployment renders --kv-cache-dtype fp8_e4m3 from its Binding; a role that
#     sets the flag itself is refused at apply, naming the key and roles[].command;
#   - flipping the dtype Setting re-renders the attached role and rolls its replicas;
#   - the Binding's deletion is held (Releasable=False/HeldByWorkloads naming the deployment)
#     until the deployment is deleted, whose Deployments and Pods go first.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
root=$(cd "$(dirname "$0")/../../.." && pwd)
b=mooncake-dram
walkthrough_namespace team-a || { echo "FAIL: namespace team-a"; exit 1; }
tmp=$(mktemp -d)
owned=$(kubectl -n gpustack-system get configmap gpustack-settings \
  -o jsonpath='{.data.model-deployment-kv-cache-dtype-owned}')
cleanup_md() {
  kubectl -n gpustack-system patch configmap gpustack-settings --type=merge \
    -p "{\"data\":{\"model-deployment-kv-cache-dtype-owned\":\"${owned:-true}\"}}" >/dev/null 2>&1
  kubectl -n team-a delete md --all --timeout=180s >/dev/null 2>&1
  delete_walkthrough
}
trap 'cleanup_md; rm -rf "$tmp"; kvc_cleanup' EXIT
md_condition() { # md_condition MD TYPE: "Status/Reason"
  kubectl -n team-a get md "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}/{.status.conditions[?(@.type==\"$2\")].reason}" 2>/dev/null
}
md_phase_is() { [ "$(kubectl -n team-a get md "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" = "$2" ]; }
role_args() { kubectl -n team-a get deploy "$1" -o jsonpath='{.spec.template.spec.containers[0].args}'; }

kvc_assert_ok "Step 1's backend is created" walkthrough_backend 512Mi
kvc_wait_for 240 "it is Ready" kvcb_phase_is $b Ready
kvc_assert_ok "Step 2's pool and Binding, as written" kubectl apply -f "$root/examples/walkthrough/step2-pool-binding.yaml"
kvc_wait_for 120 "the Binding's quota is granted" \
  bash -c "[ \"\$(kubectl -n team-a get kvcpb team-a -o jsonpath='{.status.conditions[?(@.type==\"QuotaGranted\")].status}')\" = True ]"

# --- Step 3 ----------------------------------------------------------------------------------
t0=$SECONDS
kvc_assert_ok "Step 3's ModelDeployment, as written" kubectl apply -f "$root/examples/walkthrough/step3-modeldeployment.yaml"
kvc_wait_for 180 "it is Ready" md_phase_is qwen-chat Ready
kvc_log "Step 3 apply -> Ready: $((SECONDS - t0))s"
kubectl -n team-a get md >&2
kvc_assert_eq "kubectl get md prints its engine, phase and endpoint" "qwen-chat vLLM Ready qwen-chat.team-a.svc:8000" \
  "$(kubectl -n team-a get md qwen-chat --no-headers | awk '{print $1, $2, $3, $4}')"
kvc_wait_for 60 "the endpoint Service qwen-chat fronts both replicas" bash -c \
  "[ \"\$(kubectl -n team-a get endpointslices -l kubernetes.io/service-name=qwen-chat -o json | jq '[.items[].endpoints[]? | select(.conditions.ready)] | length')\" = 2 ]"
attached=$(kubectl -n team-a get md qwen-chat -o jsonpath='{.status.conditions[?(@.type=="CacheAttached")]}')
kvc_log "Step 3's jsonpath: $attached"
kvc_assert_eq "Step 3's CacheAttached jsonpath reads True" "True" "$(jq -r .status <<<"$attached")"
kvc_assert_eq "status.kvCache echoes the Binding, the pool and the domain" \
  '{"binding":"team-a","domain":{"blockSize":64,"dtype":"bfloat16","name":"default"},"pool":"shared-dram"}' \
  "$(kubectl -n team-a get md qwen-chat -o json | jq -c -S .status.kvCache)"
kvc_assert_eq "one Deployment qwen-chat-server with 2 ready replicas" "2/2" \
  "$(kubectl -n team-a get deploy qwen-chat-server -o jsonpath='{.status.readyReplicas}/{.spec.replicas}')"
kvc_assert_eq "owned by the deployment" "ModelDeployment/qwen-chat" \
  "$(kubectl -n team-a get deploy qwen-chat-server -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')"
kvc_assert_eq "the Binding lists the deployment in status.usedBy" '[{"kind":"ModelDeployment","name":"qwen-chat","namespace":""}]' \
  "$(kubectl -n team-a get kvcpb team-a -o json | jq -c -S .status.usedBy)"

# The role carries exactly what the Pod webhook writes for the same Binding and engine.
kvc_assert_ok "a labelled vLLM Pod naming the same Binding is injected" labelled_vllm_pod chat-0 team-a
pod_config=$(kubectl -n team-a get pod chat-0 -o jsonpath='{.metadata.annotations.kvcache\.gpustack\.ai/client-config}')
role_config=$(kubectl -n team-a get deploy qwen-chat-server -o jsonpath='{.spec.template.metadata.annotations.kvcache\.gpustack\.ai/client-config}')
kvc_log "client-config: $role_config"
kvc_assert_eq "the role's client-config equals the injected Pod's" "$(jq -S . <<<"$pod_config")" "$(jq -S . <<<"$role_config")"
kvc_assert_eq "its master is the leader Service" "$b-leader.gpustack-system.svc:50051" "$(jq -r .master_server_address <<<"$role_config")"
kvc_assert_contains "the role's engine is launched with the store connector" '"--kv-transfer-config"' "$(role_args qwen-chat-server)"
kvc_assert_contains "and with kv_both (a Server role)" 'kv_both' "$(role_args qwen-chat-server)"

# --- Step 6 ----------------------------------------------------------------------------------
kvc_assert_ok "Step 6's fp8 Binding and ModelDeployment, as written" kubectl apply -f "$root/examples/walkthrough/step6-qwen-fp8.yaml"
kvc_wait_for 180 "the fp8 deployment is Ready" md_phase_is qwen-chat-fp8 Ready
kvc_assert_contains "its role renders --kv-cache-dtype fp8_e4m3 from the Binding" '"--kv-cache-dtype","fp8_e4m3"' \
  "$(role_args qwen-chat-fp8-server)"
kvc_assert_eq "its CacheAttached is True" "True" "$(md_condition qwen-chat-fp8 CacheAttached | cut -d/ -f1)"
out=$(sed -e 's/name: qwen-chat-fp8$/name: qwen-chat-fp8-own/' -e 's/accelerator: "1"/accelerator: "1"\n      extraArgs: [--kv-cache-dtype, fp8_e5m2]/' \
  "$root/examples/walkthrough/step6-qwen-fp8.yaml" | kubectl apply -f - 2>&1)
kvc_log "a role with its own --kv-cache-dtype: $out"
kvc_assert_contains "a role that sets --kv-cache-dtype itself is refused at apply, as kubectl prints the API's own rules" \
  'The ModelDeployment "qwen-chat-fp8-own" is invalid: spec.roles[0].extraArgs[0]: Forbidden: "--kv-cache-dtype"' "$out"
kvc_assert_contains "naming the key" '--kv-cache-dtype' "$out"
kvc_assert_contains "and roles[].command as the way to take it over" 'spec.roles[0].command' "$out"
kvc_assert_eq "nothing of it was created" "" "$(kubectl -n team-a get md qwen-chat-fp8-own -o name 2>/dev/null)"

# A store client started with exactly what the fp8 role renders (its Pod template: the env, the
# client-config annotation projected to MOONCAKE_CONFIG_PATH) writes into the store under the
# Binding's tenant. It runs the store image's Python client on a real node, since the engine
# image cannot run here; only the image, the command and the accelerator request are replaced
# (its labels are the role's: the store's NetworkPolicy admits role Pods by them).
kvc_wait_for 120 "the Binding qwen-fp8's domain is registered on the master (its quota granted)" \
  bash -c "[ \"\$(kubectl -n team-a get kvcpb qwen-fp8 -o jsonpath='{.status.conditions[?(@.type==\"QuotaGranted\")].status}')\" = True ]"
ns=$(kvc_real_nodes_namespace md-client)
store_image=$(kubectl -n gpustack-system get configmap gpustack-settings -o jsonpath='{.data.kv-cache-backend-image}')
script="$INJECTED_STORE_SETUP
print('config', json.dumps(config), flush=True)
print('setup', rc, flush=True)
rc = store.put('md-role-client', b'm' * (4 << 20)) if rc == 0 else rc
print('put', rc, flush=True)
sys.exit(0 if rc == 0 else 1)"
kubectl -n team-a get deploy qwen-chat-fp8-server -o json | jq --arg ns "$ns" --arg image "$store_image" --arg script "$script" '
  .spec.template as $t | {apiVersion: "v1", kind: "Pod",
    metadata: {name: "role-client", namespace: $ns, labels: $t.metadata.labels,
               annotations: $t.metadata.annotations},
    spec: ($t.spec | .restartPolicy = "Never" | .nodeSelector = {type: "real"}
      | .containers[0] |= (.image = $image | .imagePullPolicy = "Never" | del(.resources)
          | del(.readinessProbe) | .command = ["python3", "-c"] | .args = [$script]
          | .env += [{name: "POD_IP", valueFrom: {fieldRef: {fieldPath: "status.podIP"}}}]))}' >"$tmp/role-client.json"
kvc_assert_ok "a client Pod from the fp8 role's template is created on a real node" kubectl apply -f "$tmp/role-client.json"
kvc_wait_for 180 "its write succeeds" \
  bash -c "[ \"\$(kubectl -n $ns get pod role-client -o jsonpath='{.status.phase}')\" = Succeeded ]"
kubectl -n "$ns" logs role-client 2>&1 | tail -3 >&2
kvc_wait_for 30 "the master charges it to the Binding's tenant qwen-fp8-v1" bash -c \
  "admin_curl $b '/api/v1/tenant_quotas?tenant_id=qwen-fp8-v1' | jq -e '(.data.used_bytes // .data.charged_bytes // 0) > 0'"
# A domain that holds objects is not released from the ledger (TENANT_NOT_EMPTY): empty it, so
# that the Binding can go at the end.
kvc_assert_ok "the tenant's object is removed again (admin API)" \
  admin_curl $b "/api/v1/remove_all?force=true&tenant_id=qwen-fp8-v1" -X POST

# The dtype Setting is part of the rendered spec: flipping it rolls the attached replicas.
hash0=$(kubectl -n team-a get deploy qwen-chat-fp8-server -o jsonpath='{.spec.template.metadata.annotations.kvcache\.gpustack\.ai/pod-spec-hash}')
kvc_assert_ok "the Setting model-deployment-kv-cache-dtype-owned is switched off" \
  kubectl -n gpustack-system patch configmap gpustack-settings --type=merge -p '{"data":{"model-deployment-kv-cache-dtype-owned":"false"}}'
kvc_wait_for 90 "the fp8 role is re-rendered without --kv-cache-dtype" \
  bash -c "! kubectl -n team-a get deploy qwen-chat-fp8-server -o jsonpath='{.spec.template.spec.containers[0].args}' | grep -q kv-cache-dtype"
kvc_assert_ok "with a new Pod-spec hash" bash -c "[ \"\$(kubectl -n team-a get deploy qwen-chat-fp8-server -o jsonpath='{.spec.template.metadata.annotations.kvcache\.gpustack\.ai/pod-spec-hash}')\" != '$hash0' ]"
kvc_wait_for 120 "and its replica is replaced (the rollout completes)" \
  kubectl -n team-a rollout status deploy/qwen-chat-fp8-server --timeout=5s
kubectl -n gpustack-system patch configmap gpustack-settings --type=merge \
  -p "{\"data\":{\"model-deployment-kv-cache-dtype-owned\":\"${owned:-true}\"}}" >/dev/null

# --- the Binding's deletion is held by the deployment ----------------------------------------
kvc_assert_ok "the Pod and the fp8 deployment are deleted" bash -c \
  "kubectl -n team-a delete pod chat-0 --grace-period=0 --force && kubectl -n team-a delete md qwen-chat-fp8 --timeout=120s"
kvc_assert_ok "the Binding team-a's deletion is accepted" kubectl -n team-a delete kvcpb team-a --wait=false
kvc_wait_for 60 "and held: Releasable=False/HeldByWorkloads" bash -c \
  "[ \"\$(kubectl -n team-a get kvcpb team-a -o jsonpath='{.status.conditions[?(@.type==\"Releasable\")].status}/{.status.conditions[?(@.type==\"Releasable\")].reason}')\" = False/HeldByWorkloads ]"
kvc_assert_contains "naming the deployment" "ModelDeployment/qwen-chat" \
  "$(kubectl -n team-a get kvcpb team-a -o jsonpath='{.status.conditions[?(@.type=="Releasable")].message}')"
t0=$SECONDS
kvc_assert_ok "the deployment is deleted" kubectl -n team-a delete md qwen-chat --wait=false
kvc_wait_for 120 "its phase reads Deleting, or it is gone" bash -c \
  "p=\$(kubectl -n team-a get md qwen-chat -o jsonpath='{.status.phase}' 2>/dev/null); [ -z \"\$p\" ] || [ \"\$p\" = Deleting ]"
kvc_wait_for 180 "it goes once its Deployment and Pods are gone" bash -c \
  "! kubectl -n team-a get md qwen-chat -o name 2>/dev/null | grep -q . && ! kubectl -n team-a get deploy qwen-chat-server -o name 2>/dev/null | grep -q ."
kvc_wait_for 120 "then the Binding is released" bash -c "! kubectl -n team-a get kvcpb team-a -o name 2>/dev/null | grep -q ."
kvc_log "deployment deletion -> Binding released: $((SECONDS - t0))s"
kvc_done
