#!/usr/bin/env bash
# Pools and Bindings on a managed backend, and its deletion (contract §2.8, §3.4), on the real
# nodes: Step 1's backend (nodeSelector {type: real}, 512Mi a member) with Step 2's pool and
# Binding as written.
#   - the pool resolves the backend's published endpoints, the tenant ledger converges through the
#     master's admin API (the Binding's domain "default" with its 8Gi ceiling, granted against the
#     1Gi the members mounted), and the policy ConfigMap the leader seeds from holds it (it
#     exists from the backend's first pass on, `version: 1` with no tenants);
#   - a labelled vLLM Pod naming the Binding is injected with the leader Service as its master;
#   - the backend's deletion is held while the pool uses it (Deletable=False/InUse, phase Deleting
#     naming the pool; the store keeps running); once the Pod, the Binding and the pool are gone the
#     teardown deletes everything rendered, the Lease and the store's Pods, and the backend goes.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
root=$(cd "$(dirname "$0")/../../.." && pwd)
b=mooncake-dram
walkthrough_namespace team-a || { echo "FAIL: namespace team-a"; exit 1; }
trap 'delete_walkthrough; kvc_cleanup' EXIT

kvc_assert_ok "Step 1's backend is created" walkthrough_backend 512Mi
kvc_wait_for 240 "it is Ready with CAPACITY 1Gi" \
  bash -c "[ \"\$(kubectl get kvcb $b -o jsonpath='{.status.capacity.total} {.status.phase}')\" = '1Gi Ready' ]"
kvc_assert_eq "before any pool, its tenant-quota policy is seeded (version 1, no tenants)" \
  "$(printf 'version: 1\ntenants: []')" \
  "$(kubectl -n gpustack-system get configmap $b-tenant-quota-policy -o jsonpath='{.data.tenant-quota-policy\.yaml}')"
kvc_assert_ok "Step 2's pool and Binding, as written" kubectl apply -f "$root/examples/walkthrough/step2-pool-binding.yaml"
kvc_wait_for 120 "the pool is Ready" bash -c "[ \"\$(kubectl get kvcp shared-dram -o jsonpath='{.status.phase}')\" = Ready ]"
kvc_assert_eq "the pool publishes the leader Service as its client endpoint" \
  "$b-leader.gpustack-system.svc:50051" "$(kubectl get kvcp shared-dram -o jsonpath='{.status.clientEndpoint}')"
kvc_wait_for 60 "the Binding's quota is granted" \
  bash -c "[ \"\$(kubectl -n team-a get kvcpb team-a -o jsonpath='{.status.conditions[?(@.type==\"QuotaGranted\")].status}')\" = True ]"
kubectl -n team-a get kvcpb team-a >&2
ledger=$(admin_curl $b /api/v1/tenant_quotas)
kvc_assert_eq "the master's ledger holds the domain 'default' with the 8Gi ceiling" "default 8589934592" \
  "$(jq -r '.data[] | select(.tenant_id == "default") | "\(.tenant_id) \(.requested_quota_bytes)"' <<<"$ledger")"
kvc_wait_for 30 "the leader's policy seed (ConfigMap $b-tenant-quota-policy) holds it too" bash -c \
  "kubectl -n gpustack-system get configmap $b-tenant-quota-policy -o jsonpath='{.data.tenant-quota-policy\.yaml}' | grep -qx '  - name: \"default\"'"
kvc_assert_eq "the Binding's grant is read back from the master" "True" \
  "$(kubectl -n team-a get kvcpb team-a -o json | jq -r '(.status.effectiveQuota != null) | tostring | sub("true"; "True")')"

kvc_assert_ok "a labelled vLLM Pod naming the Binding is admitted" labelled_vllm_pod chat-0 team-a
kvc_assert_eq "and injected with the leader Service as its master" "$b-leader.gpustack-system.svc:50051" \
  "$(kubectl -n team-a get pod chat-0 -o jsonpath='{.metadata.annotations.kvcache\.gpustack\.ai/client-config}' | jq -r .master_server_address)"

kvc_assert_ok "the backend's deletion is accepted" kubectl delete kvcb $b --wait=false
kvc_wait_for 60 "and held while the pool uses it: Deletable=False/InUse, phase Deleting" \
  bash -c "[ \"\$(kubectl get kvcb $b -o jsonpath='{.status.phase} {.status.conditions[?(@.type==\"Deletable\")].reason}')\" = 'Deleting InUse' ]"
kvc_assert_contains "the phase message names the pool" "shared-dram" "$(kvcb_field $b '{.status.phaseMessage}')"
kvc_assert_eq "the store keeps running meanwhile (the leader serves)" "yes" "$(master_serves $b && echo yes || echo no)"
kvc_assert_ok "the Pod, the Binding and the pool are deleted" bash -c \
  "kubectl -n team-a delete pod chat-0 --grace-period=0 --force && kubectl -n team-a delete kvcpb team-a --timeout=120s && kubectl delete kvcp shared-dram --timeout=120s"
t0=$SECONDS
kvc_wait_for 300 "the backend is torn down and goes" bash -c "! kubectl get kvcb $b -o name 2>/dev/null | grep -q ."
kvc_log "teardown took $((SECONDS - t0))s"
kvc_assert_eq "nothing it rendered is left: workloads, Pods, Service, accounts, policy, Lease" "" \
  "$(kubectl -n gpustack-system get deploy,ds,pods,svc,sa,role,rolebinding,configmap -l app.kubernetes.io/instance=$b -o name; kubectl -n gpustack-system get lease $b-leader -o name 2>/dev/null)"
kvc_done
