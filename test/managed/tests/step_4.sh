#!/usr/bin/env bash
# The walkthrough's Step 4 on the real nodes: Step 1's backend (nodeSelector {type: real}, 512Mi a
# member) gains standbys with one edit, `leader: {replicas: 3}`.
#   - the steady state reads "3 desired / 1 ready"; the first leader Pod is kept and still holds the
#     Lease; ElectionObserved=True, RolloutComplete=True; the phase stays Ready;
#   - failover, measured, with each member addressing mode (Service, then Lease): the holder's
#     processes are killed from the host and its Pod deleted with no grace, so its Lease is never
#     released -> a standby takes the Lease once it expires, its master serves through the leader
#     Service, and both members re-mount (measured and logged against the budget — serving within
#     7 s, re-mounted within 10 s, with the default 4 s Lease — not asserted: the medians are
#     bench/store/failover.sh's; the reference measured about 16 s); a KVCacheLeaderHandover Event
#     is recorded; CAPACITY comes back to 1Gi.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
b=mooncake-dram
trap 'delete_backend $b; kvc_cleanup' EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# backend LEADER-YAML: Step 1's manifest with this leader block.
backend() { managed_backend $b 512Mi "$1"; }
full() { [ "$(kvcb_field $b '{.status.capacity.total} {.status.phase}')" = "1Gi Ready" ]; }

kvc_assert_ok "Step 1's backend is created" backend '{}'
kvc_wait_for 240 "it is Ready with CAPACITY 1Gi" full
first=$(store_pods $b leader)
kvc_assert_ok "Step 4: leader.replicas 3" backend '{replicas: 3}'
kvc_wait_for 180 "the leader Deployment reads 3 desired / 1 ready" \
  bash -c "[ \"\$(kubectl -n gpustack-system get deploy $b-leader -o jsonpath='{.spec.replicas}/{.status.replicas}/{.status.readyReplicas}')\" = 3/3/1 ]"
kvc_wait_for 60 "RolloutComplete=True/Complete" kvcb_condition_is $b RolloutComplete True/Complete
kubectl -n gpustack-system get deploy "$b-leader" >&2
kvc_assert_eq "the first leader Pod is kept and still holds the Lease" "$first $first" \
  "$(store_pods $b leader | grep -x "$first") $(kubectl -n gpustack-system get lease $b-leader -o jsonpath='{.spec.holderIdentity}')"
kvc_assert_eq "ElectionObserved=True/Electing" "True/Electing" "$(kvcb_condition $b ElectionObserved)"
kvc_assert_eq "the phase stays Ready (3 desired / 1 ready is the healthy steady state)" "Ready" \
  "$(kvcb_field $b '{.status.phase}')"

# failover MODE: kills the holder's processes from the host and deletes its Pod with no grace (no
# release of the Lease), and times the way back: a new holder's master serving through the leader
# Service, then both members mounted on it.
failover() {
  local mode=$1 holder t0 serving mounted
  holder=$(kubectl -n gpustack-system get lease $b-leader -o jsonpath='{.spec.holderIdentity}')
  t0=$(now)
  # Frozen first, so that neither the kill nor the kubelet's stop of the deleted Pod lets the
  # launcher release its Lease: it dies as a crashed node's would.
  kvc_assert_ok "($mode) the holder's processes are frozen ($holder)" signal_pod_processes "$holder" STOP
  kubectl -n gpustack-system delete pod "$holder" --grace-period=0 --force >/dev/null 2>&1
  signal_pod_processes "$holder" KILL
  serving=""
  mounted=""
  for _ in $(seq 1 600); do
    if [ -z "$serving" ] && master_serves $b &&
       [ "$(kubectl -n gpustack-system get lease $b-leader -o jsonpath='{.spec.holderIdentity}')" != "$holder" ]; then
      serving=$(since "$t0")
    fi
    if [ -n "$serving" ] && [ "$(segments $b)" = 2 ]; then mounted=$(since "$t0"); break; fi
    sleep 0.1
  done
  kvc_log "failover ($mode addressing): new master serving after ${serving:-never}s, members re-mounted after ${mounted:-never}s"
  echo "$mode serving=${serving:-never} mounted=${mounted:-never}" >>"$KVC_MANAGED_DIR/failover-figures.txt"
  kvc_assert_ok "($mode) a new holder's master serves through the leader Service" test -n "$serving"
  kvc_assert_ok "($mode) both members re-mount on the new master" test -n "$mounted"
  # The budget (serving within 7 s, re-mounted within 10 s) is reported, not asserted: a timed
  # assertion fails on a loaded machine without telling anything about the code
  # (docs/performance.md has bench/store/failover.sh's figures).
  kvc_log "($mode) serving after ${serving:-never}s, re-mounted after ${mounted:-never}s against a budget of 7 s and 10 s:" \
    "$(awk -v s="${serving:-999}" -v m="${mounted:-999}" 'BEGIN { print (s <= 7 && m <= 10 ? "within" : "OVER") }')"
  kvc_wait_for 60 "($mode) CAPACITY 1Gi and Ready again" full
}
mkdir -p "$KVC_MANAGED_DIR"
failover Service
kvc_wait_for 60 "a KVCacheLeaderHandover Event is recorded" \
  bash -c "kubectl get events -A --field-selector reason=KVCacheLeaderHandover,involvedObject.name=$b -o name | grep -q ."
kvc_assert_ok "memberAddressing: Lease" backend '{replicas: 3, memberAddressing: Lease}'
kvc_wait_for 180 "the members run the Lease-addressed template" bash -c "
  [ \"\$(kubectl -n gpustack-system get pods -l app.kubernetes.io/instance=$b,app.kubernetes.io/component=member-0 -o json |
     jq -r '[.items[] | select(.metadata.deletionTimestamp == null) | .spec.containers[0].env[] | select(.name == \"MOONCAKE_MASTER\") | .value] | unique | join(\",\")')\" = k8s://gpustack-system/$b-leader ]"
kvc_wait_for 120 "and are mounted again (CAPACITY 1Gi, Ready)" full
failover Lease
kvc_done
