#!/usr/bin/env bash
# Troubleshooting row "Member Pod stuck — Event FailedMount ... hostPath type check failed"
# (issue 27 §1, §2): a backend whose disk tier names a directory that does not exist on the node.
#   - the member Pod stays Pending (ContainerCreating) and the kubelet records the table's Event;
#   - the backend says which Pod, which hostPath, on which node, and the fix:
#     MembersMounted=False/FailedMount with the `install -d -o 65532 -g 0 -m 0750 DIR` of Step 5,
#     phase Degraded (before, it said only NoSegments: "0 member Pods running");
#   - once the directory is created as the message says, the kubelet's next retry mounts it and the
#     backend is Ready with MembersMounted=True/Mounted.
set -uo pipefail
. "$(dirname "$0")/../managed/lib.sh"
kvc_init
kvc_require_real_nodes
node=$(awk '{print $1}' <<<"$KVC_REAL_NODE_NAMES")
b=mount-missing
base=$(mktemp -d /var/tmp/kvcache-mount-XXXXXX)
chmod 0755 "$base"
dir=$base/tier
trap 'delete_backend $b; rm -rf "$base"; kvc_cleanup' EXIT

kvc_assert_ok "backend $b on $node, its tier at $dir, which does not exist" tier_backend $b "$node" "$dir"
member=""
member_pod() { member=$(store_pods $b member-0 | head -1); [ -n "$member" ]; }
kvc_wait_for 120 "its member Pod exists" member_pod
mount_event() {
  kubectl -n "$KVC_SYSTEM_NAMESPACE" get events.events.k8s.io --field-selector reason=FailedMount -o json |
    jq -r --arg pod "$member" '.items[] | select(.regarding.name == $pod) | .note' | grep -q "hostPath type check failed"
}
kvc_wait_for 120 "the kubelet records the table's Event: FailedMount ... hostPath type check failed" mount_event
kvc_assert_eq "the member Pod is stuck in Pending" "Pending" \
  "$(kubectl -n "$KVC_SYSTEM_NAMESPACE" get pod "$member" -o jsonpath='{.status.phase}')"
kvc_wait_for 60 "the backend says MembersMounted=False/FailedMount" kvcb_condition_is $b MembersMounted False/FailedMount
kvc_wait_for 30 "kvcache diagnose names it: Member Pod stuck" diagnose_finds KVCacheBackend $b "Member Pod stuck"
message=$(kvcb_field $b '{.status.conditions[?(@.type=="MembersMounted")].message}')
kvc_log "MembersMounted: $message"
kvc_assert_contains "naming the Pod" "Pod $member:" "$message"
kvc_assert_contains "the hostPath and the node" "(hostPath $dir) cannot be mounted on node $node" "$message"
kvc_assert_contains "and the fix, as Step 5 shows" "install -d -o 65532 -g 0 -m 0750 $dir" "$message"
kvc_assert_eq "phase Degraded" "Degraded" "$(kvcb_field $b '{.status.phase}')"

kvc_assert_ok "the directory is created as the message says" install -d -o 65532 -g 0 -m 0750 "$dir"
t0=$SECONDS
kvc_wait_for 240 "the kubelet mounts it: MembersMounted=True/Mounted" kvcb_condition_is $b MembersMounted True/Mounted
kvc_wait_for 60 "and the backend is Ready" kvcb_phase_is $b Ready
kvc_log "recovered $((SECONDS - t0)) s after the directory was created"
kvc_assert_ok "and kvcache diagnose finds nothing on it any more" diagnose_clear KVCacheBackend $b
kvc_done
