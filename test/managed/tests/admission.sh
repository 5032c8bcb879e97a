#!/usr/bin/env bash
# The validating admission of KVCacheBackend through the real API server and the in-cluster
# operator's webhook (validate.gpustack-worker-kvcache.worker.v1.kvcachebackend), and the Setting
# kv-cache-backend-image read live by both the webhook and the controller:
#   - the Setting cleared: a managed backend naming no image is refused, naming spec.image and the
#     Setting; a running backend reads Degraded ("changes would not reach it") and keeps running;
#     the Setting back: Ready again, with no restart of the operator;
#   - Step 5's rule: a running group cannot gain a local disk tier;
#   - the snapshot flags are refused in leader.extraArgs, with the seed's reason;
#   - member groups cannot be reordered (position is identity); appending one is admitted;
#   - electionBackend: None prunes the election accounts and the master runs directly.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
b=admission-dram
setting=$(kubectl -n gpustack-system get configmap gpustack-settings -o jsonpath='{.data.kv-cache-backend-image}')
restore_setting() {
  kubectl -n gpustack-system patch configmap gpustack-settings --type=merge \
    -p "{\"data\":{\"kv-cache-backend-image\":\"$setting\"}}" >/dev/null
}
trap 'restore_setting; delete_backend $b; delete_backend admission-noimage; kvc_cleanup' EXIT

# backend NAME GROUPS-YAML [EXTRA-LEADER-YAML]
backend() {
  kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: $1}
spec:
  connection:
    managed:
      leader: {${3:-}}
      members: $2
YAML
}
one_group='[{nodeSelector: {type: real}, medium: DRAM, capacityPerMember: 256Mi}]'
kvc_assert_ok "a managed backend on the Setting's image is admitted" backend $b "$one_group"
kvc_wait_for 240 "and becomes Ready" kvcb_phase_is $b Ready

kvc_assert_ok "the Setting kv-cache-backend-image is cleared" \
  kubectl -n gpustack-system patch configmap gpustack-settings --type=merge -p '{"data":{"kv-cache-backend-image":""}}'
kvc_wait_for 30 "a new managed backend naming no image is refused, naming spec.image and the Setting" bash -c "
  out=\$(kubectl apply -f - 2>&1 <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: admission-noimage}
spec: {connection: {managed: {leader: {}, members: $one_group}}}
YAML
); [[ \$out == *spec.image* && \$out == *kv-cache-backend-image* ]]"
kvc_wait_for 30 "the running backend reads Degraded: changes would not reach it" bash -c \
  "kubectl get kvcb $b -o jsonpath='{.status.phase} {.status.phaseMessage}' | grep -q '^Degraded .*would not reach it'"
kvc_assert_eq "and keeps serving" "True/Serving" "$(kvcb_condition $b LeaderAvailable)"
restore_setting
kvc_wait_for 30 "the Setting back: Ready again" kvcb_phase_is $b Ready

kvc_assert_refused "Step 5: a running group cannot gain a local disk tier" "cannot gain" \
  backend $b '[{nodeSelector: {type: real}, medium: DRAM, capacityPerMember: 256Mi, localDisks: [{path: /var/lib/kvcache}]}]'
kvc_assert_refused "a snapshot flag in leader.extraArgs is refused, with the reason" "another key's bytes" \
  backend $b "$one_group" 'extraArgs: ["-enable_snapshot=true"]'
two_groups='[{nodeSelector: {type: real}, medium: DRAM, capacityPerMember: 256Mi}, {nodeSelector: {kvcache: "true", type: real}, medium: DRAM, capacityPerMember: 128Mi}]'
kvc_assert_ok "appending a member group is admitted" backend $b "$two_groups"
kvc_assert_refused "reordering the groups is refused, naming both positions" "members[1]" \
  backend $b '[{nodeSelector: {kvcache: "true", type: real}, medium: DRAM, capacityPerMember: 128Mi}, {nodeSelector: {type: real}, medium: DRAM, capacityPerMember: 256Mi}]'
kvc_wait_for 120 "the appended group's members mount (CAPACITY 768Mi)" bash -c \
  "[ \"\$(kubectl get kvcb $b -o jsonpath='{.status.capacity.total}')\" = 768Mi ]"

# The election switched off: the election accounts are pruned, the master runs directly.
kvc_assert_ok "electionBackend: None is admitted" backend $b "$two_groups" 'electionBackend: None'
kvc_wait_for 120 "the election ServiceAccounts, Roles and RoleBindings are pruned" bash -c \
  "[ -z \"\$(kubectl -n gpustack-system get sa,role,rolebinding -l app.kubernetes.io/instance=$b -o name)\" ]"
kvc_wait_for 180 "the backend is Ready again, with no ElectionObserved" bash -c \
  "[ \"\$(kubectl get kvcb $b -o jsonpath='{.status.phase}/{.status.conditions[?(@.type==\"ElectionObserved\")].status}')\" = Ready/ ]"
kvc_done
