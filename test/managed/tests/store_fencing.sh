#!/usr/bin/env bash
# Fencing of the store leader, on the real nodes (issue: faults with nothing lost; docs/backends.md,
# "Failover and fencing"). A backend with three leader replicas (the default 4 s Lease):
#   1. the holder is cut off from the API server (a DROP rule in its Pod's network namespace)
#      while its master keeps its clients (the members): in every sample of the leader Pods'
#      /readyz (~150 ms apart), never two masters serve; the cut-off one stops serving before
#      another starts; a standby takes over; once the rule is gone the cut-off one rejoins as a
#      standby;
#   2. the holder's launcher and master are paused (SIGSTOP) for 20 s, then resumed: the same
#      samples; a standby takes over during the pause; the resumed one serves nothing and rejoins
#      as a standby; exactly one holder after.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
b=kvc-fencing
samples=$KVC_CLEANUP_FILE.d/samples
mkdir -p "$(dirname "$samples")"
sampler=""
cut_pid=""
stop_sampler() { [ -n "$sampler" ] && kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null; sampler=""; }
uncut() { [ -n "$cut_pid" ] && nsenter -t "$cut_pid" -n iptables -D OUTPUT -p tcp -d "$api_ip" -j DROP 2>/dev/null; cut_pid=""; }
trap 'stop_sampler; uncut; delete_backend $b; kvc_cleanup' EXIT

holder() { kubectl -n gpustack-system get lease $b-leader -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
full() { [ "$(kvcb_field $b '{.status.capacity.total} {.status.phase}')" = "1Gi Ready" ]; }
one_ready() {
  [ "$(kubectl -n gpustack-system get deploy $b-leader -o jsonpath='{.status.replicas}/{.status.readyReplicas}')" = 3/1 ]
}

# The sampler: a round, then 100 ms (~150 ms a sample here): "<seconds> <pod>=<0|1> ..." —
# which leader Pods' launchers answer /readyz 200 (only while their master serves and their Lease
# is unexpired), asked in parallel with a 90 ms budget; the Pod IPs are read again every second.
start_sampler() {
  : >"$samples"
  (
    ips=""; refreshed=0
    while :; do
      if [ $(( $(date +%s) - refreshed )) -ge 1 ]; then
        ips=$(kubectl -n gpustack-system get pods -l "app.kubernetes.io/instance=$b,app.kubernetes.io/component=leader" \
          -o jsonpath='{range .items[*]}{.metadata.name}={.status.podIP}{" "}{end}' 2>/dev/null)
        refreshed=$(date +%s)
      fi
      line=$(date +%s.%N)
      for pair in $ips; do
        ip=${pair#*=}
        [ -n "$ip" ] || continue
        ( curl -s -o /dev/null -w '%{http_code}' --max-time 0.09 "http://$ip:9004/readyz" 2>/dev/null |
            grep -q 200 && echo "${pair%%=*}=1" || echo "${pair%%=*}=0" ) &
      done >"$samples.line" 2>/dev/null
      wait
      echo "$line $(tr '\n' ' ' <"$samples.line")" >>"$samples"
      sleep 0.1
    done
  ) &
  sampler=$!
}

# check_samples OLD: never two serving in one sample; OLD's last serving sample comes before any
# other Pod's first serving sample after OLD stopped.
check_samples() {
  local old=$1
  kvc_assert_eq "($2) never two serving masters in one sample ($(wc -l <"$samples") samples)" 0 \
    "$(awk '{ n = 0; for (i = 2; i <= NF; i++) if ($i ~ /=1$/) n++; if (n > 1) bad++ } END { print bad + 0 }' "$samples")"
  local order
  order=$(awk -v old="$old" '
    { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[2] == 1) {
        if (kv[1] == old) last_old = $1; else if (!first_new && $1 > last_old) first_new = $1 } } }
    END { if (!first_new) print "no-successor"; else if (last_old < first_new) print "ordered"; else print "overlap" }' "$samples")
  kvc_assert_eq "($2) the old master stopped serving before another started" ordered "$order"
}

api_ip=$(kubectl get service kubernetes -n default -o jsonpath='{.spec.clusterIP}')
kvc_assert_ok "a backend with three leader replicas" managed_backend $b 512Mi '{replicas: 3}'
kvc_wait_for 300 "it is Ready with CAPACITY 1Gi" full
kvc_wait_for 180 "the leader Deployment reads 3 desired / 1 ready" one_ready
kvc_assert_contains "the launcher runs with the 4 s Lease, fenced" "--lease-duration=4000ms" \
  "$(kubectl -n gpustack-system get deploy $b-leader -o jsonpath='{.spec.template.spec.containers[0].args}')"

# 1. Cut off from the API server.
old=$(holder)
start_sampler
sleep 2
cut_pid=$(host_pid "KUBERNETES_POD_NAME=$old")
kvc_assert_ok "the holder $old is cut off from the API server ($api_ip)" \
  nsenter -t "$cut_pid" -n iptables -I OUTPUT -p tcp -d "$api_ip" -j DROP
kvc_wait_for 60 "a standby takes the Lease" bash -c "h=\$(kubectl -n gpustack-system get lease $b-leader -o jsonpath='{.spec.holderIdentity}'); [ -n \"\$h\" ] && [ \"\$h\" != $old ]"
new=$(holder)
kvc_wait_for 30 "its master serves" bash -c "grep -q '$new=1' '$samples'"
sleep 3
stop_sampler
check_samples "$old" cut-off
kvc_log "the cut-off launcher's log: $(kubectl -n gpustack-system logs "$old" --previous 2>/dev/null | grep -m1 'stopping the master' || kubectl -n gpustack-system logs "$old" 2>/dev/null | grep -m1 'stopping the master')"
uncut
kvc_wait_for 60 "the cut-off Pod rejoins as a standby (3 desired / 1 ready, the Lease still $new's)" \
  bash -c "[ \"\$(kubectl -n gpustack-system get deploy $b-leader -o jsonpath='{.status.replicas}/{.status.readyReplicas}')\" = 3/1 ] && [ \"\$(kubectl -n gpustack-system get lease $b-leader -o jsonpath='{.spec.holderIdentity}')\" = $new ]"
kvc_wait_for 120 "the members re-mount (CAPACITY 1Gi, Ready)" full

# 2. Paused for 20 s, then resumed.
old=$(holder)
start_sampler
sleep 2
kvc_assert_ok "the holder $old is paused (SIGSTOP, launcher and master)" signal_pod_processes "$old" STOP
sleep 20
kvc_assert_ok "and resumed" signal_pod_processes "$old" CONT
sleep 5
stop_sampler
new=$(holder)
kvc_assert_ok "a standby took the Lease during the pause ($new)" test "$new" != "$old" -a -n "$new"
check_samples "$old" paused
kvc_wait_for 60 "the resumed Pod rejoins as a standby: exactly one holder, 3 desired / 1 ready" one_ready
kvc_assert_eq "the Lease is still the standby's" "$new" "$(holder)"
kvc_wait_for 120 "the members re-mount (CAPACITY 1Gi, Ready)" full
kvc_done
