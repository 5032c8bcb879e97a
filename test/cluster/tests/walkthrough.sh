#!/usr/bin/env bash
# Every manifest of the shared-cache walkthrough (examples/walkthrough/, Steps 1-6) applies with
# `kubectl apply --server-side --validate=strict`, and the API server fills in the defaults the
# walkthrough promises. Uses the walkthrough's own names (team-a, team-b, mooncake-dram, ...), so it
# holds a ctest RESOURCE_LOCK and removes everything it made.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
W=$KVC_REPO_DIR/examples/walkthrough

# Leftovers of an aborted run would make this a test of the previous run.
for ns in team-a team-b; do
  if kubectl get namespace "$ns" >/dev/null 2>&1; then
    kvc_log "removing leftover namespace $ns"
    kubectl delete namespace "$ns" --wait=true --timeout=120s >/dev/null 2>&1 || true
  fi
done
kubectl delete kvcb mooncake-dram mooncake-disk --ignore-not-found >/dev/null 2>&1 || true
kubectl delete kvcp shared-dram --ignore-not-found >/dev/null 2>&1 || true
kvc_register_cluster_object kvcachebackend/mooncake-dram
kvc_register_cluster_object kvcachebackend/mooncake-disk
kvc_register_cluster_object kvcachepool/shared-dram
kvc_create_namespace team-a
kvc_create_namespace team-b

apply() { kubectl apply --server-side --validate=strict -f "$1"; }
get() { kubectl get "$@" 2>&1; }

# Step 1
kvc_assert_ok "step 1 (KVCacheBackend mooncake-dram) applies" apply "$W/step1-backend.yaml"
L='{.spec.connection.managed.leader'
kvc_assert_eq "backend type defaults to Mooncake" "Mooncake" "$(get kvcb mooncake-dram -o jsonpath='{.spec.type}')"
kvc_assert_eq "leader: {} -> multiTenancy defaults to true" "true" "$(get kvcb mooncake-dram -o jsonpath="$L.multiTenancy}")"
kvc_assert_eq "leader.replicas defaults to 1" "1" "$(get kvcb mooncake-dram -o jsonpath="$L.replicas}")"
kvc_assert_eq "leader.electionBackend defaults to Kubernetes" "Kubernetes" "$(get kvcb mooncake-dram -o jsonpath="$L.electionBackend}")"
kvc_assert_eq "leader.memberAddressing defaults to Service" "Service" "$(get kvcb mooncake-dram -o jsonpath="$L.memberAddressing}")"
kvc_assert_eq "leader.allocationStrategy defaults to FreeRatioFirst" "FreeRatioFirst" "$(get kvcb mooncake-dram -o jsonpath="$L.allocationStrategy}")"
kvc_assert_eq "transport block defaults to {} and protocol to Auto" "Auto" "$(get kvcb mooncake-dram -o jsonpath='{.spec.transport.protocol}')"
kvc_assert_eq "members[0].fabricInterfaceCount defaults to 1" "1" "$(get kvcb mooncake-dram -o jsonpath='{.spec.connection.managed.members[0].fabricInterfaceCount}')"
kvc_assert_eq "members[0].capacityPerMember kept verbatim" "8Gi" "$(get kvcb mooncake-dram -o jsonpath='{.spec.connection.managed.members[0].capacityPerMember}')"
kvc_assert_eq "a member group without transport gets no transport override" "" "$(get kvcb mooncake-dram -o jsonpath='{.spec.connection.managed.members[0].transport}')"

# Step 2
kvc_assert_ok "step 2 (KVCachePool shared-dram, Binding team-a/team-a) applies" apply "$W/step2-pool-binding.yaml"
kvc_assert_eq "pool quota.total kept" "16Gi" "$(get kvcp shared-dram -o jsonpath='{.spec.quota.total}')"
kvc_assert_eq "Binding domain.name left out -> default" "default" "$(get -n team-a kvcpb team-a -o jsonpath='{.spec.domain.name}')"
kvc_assert_eq "Binding domain blockSize/dtype kept" "64/bfloat16" "$(get -n team-a kvcpb team-a -o jsonpath='{.spec.domain.blockSize}/{.spec.domain.dtype}')"

# Step 3
kvc_assert_ok "step 3 (ModelDeployment team-a/qwen-chat) applies" apply "$W/step3-modeldeployment.yaml"
kvc_assert_eq "roles[].kind defaults to Server" "Server" "$(get -n team-a md qwen-chat -o jsonpath='{.spec.roles[0].kind}')"
kvc_assert_eq "roles[].size defaults to 1" "1" "$(get -n team-a md qwen-chat -o jsonpath='{.spec.roles[0].size}')"
kvc_assert_eq "roles[].replicas kept" "2" "$(get -n team-a md qwen-chat -o jsonpath='{.spec.roles[0].replicas}')"
kvc_assert_eq "kvCache.connector defaults to Mooncake" "Mooncake" "$(get -n team-a md qwen-chat -o jsonpath='{.spec.kvCache.connector}')"
kvc_assert_eq "kvCache.poolRef names the Binding" "team-a" "$(get -n team-a md qwen-chat -o jsonpath='{.spec.kvCache.poolRef.name}')"

# Step 4
kvc_assert_ok "step 4 (leader.replicas: 3) applies over step 1" apply "$W/step4-backend-ha.yaml"
kvc_assert_eq "leader.replicas is now 3" "3" "$(get kvcb mooncake-dram -o jsonpath="$L.replicas}")"
kvc_assert_eq "multiTenancy still defaults to true" "true" "$(get kvcb mooncake-dram -o jsonpath="$L.multiTenancy}")"
kvc_assert_eq "electionBackend still Kubernetes" "Kubernetes" "$(get kvcb mooncake-dram -o jsonpath="$L.electionBackend}")"

# Step 5
kvc_assert_ok "step 5 (KVCacheBackend mooncake-disk with a disk tier) applies" apply "$W/step5-backend-disk.yaml"
kvc_assert_eq "localDisks[0] path/capacity kept" "/var/lib/kvcache/100Gi" \
  "$(get kvcb mooncake-disk -o jsonpath='{.spec.connection.managed.members[0].localDisks[0].path}/{.spec.connection.managed.members[0].localDisks[0].capacity}')"
kvc_assert_eq "localDisks[0].cleanAfterDelete defaults to false" "false" \
  "$(get kvcb mooncake-disk -o jsonpath='{.spec.connection.managed.members[0].localDisks[0].cleanAfterDelete}')"
kvc_assert_eq "members select kvcache=true" "true" "$(get kvcb mooncake-disk -o jsonpath='{.spec.connection.managed.members[0].nodeSelector.kvcache}')"

# Step 6
kvc_assert_ok "step 6 (Binding team-b/team-b) applies" apply "$W/step6-team-b.yaml"
kvc_assert_eq "team-b domain.name kept" "llama-8b-v1" "$(get -n team-b kvcpb team-b -o jsonpath='{.spec.domain.name}')"
kvc_assert_ok "step 6 (Binding team-a/qwen-fp8, ModelDeployment team-a/qwen-chat-fp8) applies" apply "$W/step6-qwen-fp8.yaml"
kvc_assert_eq "qwen-fp8 dtype kept" "fp8_e4m3" "$(get -n team-a kvcpb qwen-fp8 -o jsonpath='{.spec.domain.dtype}')"
kvc_assert_eq "qwen-chat-fp8 attaches to qwen-fp8" "qwen-fp8" "$(get -n team-a md qwen-chat-fp8 -o jsonpath='{.spec.kvCache.poolRef.name}')"

# Re-applying every step is a no-op (server-side apply is idempotent; step 4 is the live state).
for f in "$W"/step*.yaml; do
  [ "$(basename "$f")" = step1-backend.yaml ] && continue
  kvc_assert_ok "re-applying $(basename "$f") succeeds" apply "$f"
done

# Everything is listed by the short names and the category.
kvc_assert_eq "kubectl get kvcb,kvcp,kvcpb,md -A lists 2+1+3+2 objects" "8" \
  "$(kubectl get kvcb,kvcp,kvcpb,md -A --no-headers 2>&1 | grep -cE 'mooncake-(dram|disk)|shared-dram|kvcachepoolbinding.*(team-a|team-b|qwen-fp8)|modeldeployment.*qwen-chat')"
kvc_assert_contains "kubectl get gpustack -A (category) lists the ModelDeployments" "qwen-chat-fp8" "$(kubectl get gpustack -A 2>&1)"

kvc_done
