#!/usr/bin/env bash
# Troubleshooting row "KVCacheBackend stuck in Provisioning or Error — LeaderAvailable=False"
# (issue 27 §1) for its two other causes on the real nodes (leader_image.sh has the image):
#   - a leader that cannot be scheduled: every real node cordoned when the backend is created
#     (the store's namespace places its Pods on real nodes only). LeaderAvailable=False/
#     LeaderUnschedulable quoting the scheduler, phase Error; the nodes uncordoned, Ready;
#   - a leader that crash-loops: leader.extraArgs gives the master a value it refuses at start
#     (-eviction_ratio=notanumber). LeaderAvailable=False/LeaderCrashLooping with the restart count
#     and the master's last words, phase Error; the argument removed, Ready.
set -uo pipefail
. "$(dirname "$0")/../managed/lib.sh"
kvc_init
kvc_require_real_nodes
b=leader-fail
read -r -a real_nodes <<<"$(kubectl get nodes -l type=real -o jsonpath='{.items[*].metadata.name}')"
uncordon() { kubectl uncordon "${real_nodes[@]}" >/dev/null 2>&1; }
trap 'uncordon; delete_backend $b; kvc_cleanup' EXIT

# -- a leader that cannot be scheduled ---------------------------------------------------------
kvc_assert_ok "every real node cordoned (${real_nodes[*]})" kubectl cordon "${real_nodes[@]}"
kvc_assert_ok "backend $b created" managed_backend $b 256Mi
kvc_wait_for 120 "LeaderAvailable=False/LeaderUnschedulable" \
  kvcb_condition_is $b LeaderAvailable False/LeaderUnschedulable
message=$(object_message kvcb $b LeaderAvailable)
kvc_log "LeaderAvailable: $message"
kvc_assert_contains "naming the leader Pod" "$b-leader-" "$message"
kvc_assert_contains "and quoting the scheduler" "unschedulable" "$message"
kvc_wait_for 30 "phase Error" kvcb_phase_is $b Error
t0=$SECONDS
kvc_assert_ok "the nodes uncordoned" kubectl uncordon "${real_nodes[@]}"
kvc_wait_for 180 "Ready once the leader is scheduled" kvcb_phase_is $b Ready
kvc_log "Ready $((SECONDS - t0)) s after the uncordon"

# -- a leader that crash-loops ---------------------------------------------------------------
kvc_assert_ok "leader.extraArgs [-eviction_ratio=notanumber]" kubectl patch kvcb $b --type=merge \
  -p '{"spec":{"connection":{"managed":{"leader":{"extraArgs":["-eviction_ratio=notanumber"]}}}}}'
kvc_wait_for 180 "LeaderAvailable=False/LeaderCrashLooping" \
  kvcb_condition_is $b LeaderAvailable False/LeaderCrashLooping
message=$(object_message kvcb $b LeaderAvailable)
kvc_log "LeaderAvailable: $message"
kvc_assert_contains "naming the leader Pod" "$b-leader-" "$message"
kvc_assert_contains "with the restart count" "restart" "$message"
kvc_assert_contains "and the master's last words" "eviction_ratio" "$message"
kvc_wait_for 30 "phase Error" kvcb_phase_is $b Error
t0=$SECONDS
kvc_assert_ok "the argument removed" kubectl patch kvcb $b --type=json \
  -p '[{"op":"remove","path":"/spec/connection/managed/leader/extraArgs"}]'
kvc_wait_for 180 "Ready on a master that starts" kvcb_phase_is $b Ready
kvc_log "Ready $((SECONDS - t0)) s after the argument was removed"
kvc_done
