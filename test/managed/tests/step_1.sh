#!/usr/bin/env bash
# The walkthrough's Step 1 on the real nodes: the seed's four-line managed KVCacheBackend, its
# nodeSelector and capacity scaled to this machine — {type: real} (the seed's kubernetes.io/os:
# linux also matches the fake kwok nodes, where no member could run) and 512Mi a member instead of
# 8Gi — rendered by the in-cluster operator and run by the store image.
#   - `kubectl get kvcb -w` reads Ready, the leader Service's endpoint and a CAPACITY equal to
#     the sum of the segments the two real members registered (1Gi: "two nodes at 8Gi show 16Gi");
#   - MembersMounted=True, status.members joined to the member Pods' nodes; the Lease names the
#     leader Pod, which the store labelled; ElectionObserved and RolloutComplete True;
#   - a pass over an unchanged store writes nothing (the backend and its Deployment keep their
#     resourceVersions across a resync);
#   - a member stopped (SIGSTOP: its Pod stays Ready, its client lease expires) -> MembersMounted
#     =False/SegmentsShort naming its Pod, CAPACITY halves, phase Degraded; resumed -> back.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
b=mooncake-dram
trap 'delete_backend $b; kvc_cleanup' EXIT

kvc_assert_ok "the seed's Step 1 backend is created (nodeSelector {type: real}, 512Mi a member)" \
  kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata:
  name: $b
spec:
  type: Mooncake
  connection:
    managed:
      leader: {}
      members:
        - nodeSelector:
            type: real
          medium: DRAM
          capacityPerMember: 512Mi
YAML
t0=$SECONDS
kvc_wait_for 240 "the backend becomes Ready" kvcb_phase_is $b Ready
kvc_wait_for 120 "CAPACITY reads 1Gi: both members registered their segments" \
  bash -c "[ \"\$(kubectl get kvcb $b -o jsonpath='{.status.capacity.total}')\" = 1Gi ]"
kvc_log "create -> Ready with 1Gi in $((SECONDS - t0))s"
kubectl get kvcb "$b" >&2
kvc_assert_eq "kubectl get kvcb prints the seed's columns" \
  "$b Mooncake Ready $b-leader.gpustack-system.svc:50051 1Gi" \
  "$(kubectl get kvcb $b --no-headers | awk '{print $1, $2, $3, $4, $5}')"
kvc_assert_eq "MembersMounted=True/Mounted" "True/Mounted" "$(kvcb_condition $b MembersMounted)"
kvc_assert_eq "status.members: one segment per real node, medium DRAM, state OK" \
  "$(for n in $KVC_REAL_NODE_NAMES; do echo "$n DRAM OK"; done | sort)" \
  "$(kvcb_field $b '{range .status.members[*]}{.nodeName} {.medium} {.state}{"\n"}{end}' | sort)"
leader=$(store_pods $b leader)
kvc_assert_eq "one leader Pod" "1" "$(grep -c . <<<"$leader")"
kvc_assert_eq "the Lease $b-leader names the leader Pod" "$leader" \
  "$(kubectl -n gpustack-system get lease $b-leader -o jsonpath='{.spec.holderIdentity}')"
kvc_assert_eq "the store labelled its winning Pod mooncake.io/store-role=leader" "leader" \
  "$(kubectl -n gpustack-system get pod "$leader" -o jsonpath='{.metadata.labels.mooncake\.io/store-role}')"
kvc_assert_eq "ElectionObserved=True/Electing" "True/Electing" "$(kvcb_condition $b ElectionObserved)"
kvc_assert_eq "RolloutComplete=True/Complete" "True/Complete" "$(kvcb_condition $b RolloutComplete)"
kvc_assert_eq "Deletable=True/Unused" "True/Unused" "$(kvcb_condition $b Deletable)"
kvc_assert_eq "the rendered objects, each with the ownership note" \
  "$(printf '%s\n' daemonset.apps/$b-member-0 deployment.apps/$b-leader role.rbac.authorization.k8s.io/$b-leader role.rbac.authorization.k8s.io/$b-member rolebinding.rbac.authorization.k8s.io/$b-leader rolebinding.rbac.authorization.k8s.io/$b-member service/$b-leader serviceaccount/$b-leader serviceaccount/$b-member)" \
  "$(kubectl -n gpustack-system get deploy,ds,svc,sa,role,rolebinding -l app.kubernetes.io/instance=$b -o json |
     jq -r '.items[] | select(.metadata.annotations["kvcache.gpustack.ai/ownership"] != null) | "\(.kind)/\(.metadata.name)"' |
     sed -e 's|^DaemonSet/|daemonset.apps/|; s|^Deployment/|deployment.apps/|; s|^Role/|role.rbac.authorization.k8s.io/|; s|^RoleBinding/|rolebinding.rbac.authorization.k8s.io/|; s|^Service/|service/|; s|^ServiceAccount/|serviceaccount/|' | sort)"

# No writes over an unchanged store: 20 s is more than one 15 s pass. (The workloads' own
# controllers keep writing their status, so what is compared is what the operator writes: the
# backend's status, and the time of its last apply to the Deployment and the DaemonSet.)
writes() {
  echo "$(kvcb_field $b '{.metadata.resourceVersion}')" \
    "$(kubectl -n gpustack-system get deploy/$b-leader ds/$b-member-0 -o jsonpath='{range .items[*]}{.metadata.managedFields[?(@.manager=="kvcache-operator")].time} {end}')"
}
before=$(writes)
sleep 20
kvc_assert_eq "a pass over an unchanged store writes nothing (backend status, Deployment, DaemonSet)" \
  "$before" "$(writes)"

# A member stopped: its Pod stays Ready (the kernel still accepts its probe), its segment goes
# once the master's client_ttl (10 s) passes.
node1=$(awk '{print $2}' <<<"$KVC_REAL_NODE_NAMES")
member=$(kubectl -n gpustack-system get pods -l app.kubernetes.io/instance=$b,app.kubernetes.io/component=member-0 \
  --field-selector spec.nodeName="$node1" -o jsonpath='{.items[0].metadata.name}')
kvc_assert_ok "the member on $node1 ($member) is stopped (SIGSTOP)" signal_store_process "$member" mc_store_rest_server STOP
kvc_wait_for 90 "MembersMounted=False/SegmentsShort" kvcb_condition_is $b MembersMounted False/SegmentsShort
kvc_assert_contains "the condition names the member Pod" "$member" \
  "$(kvcb_field $b '{.status.conditions[?(@.type=="MembersMounted")].message}')"
kvc_assert_eq "CAPACITY reads 512Mi, phase Degraded" "512Mi Degraded" \
  "$(kvcb_field $b '{.status.capacity.total} {.status.phase}')"
kubectl describe kvcb "$b" | sed -n '/Conditions:/,$p' >&2
kvc_assert_ok "the member resumes (SIGCONT)" signal_store_process "$member" mc_store_rest_server CONT
kvc_wait_for 90 "MembersMounted=True/Mounted again" kvcb_condition_is $b MembersMounted True/Mounted
kvc_wait_for 30 "CAPACITY 1Gi and Ready again" \
  bash -c "[ \"\$(kubectl get kvcb $b -o jsonpath='{.status.capacity.total} {.status.phase}')\" = '1Gi Ready' ]"
kvc_done
