#!/usr/bin/env bash
# The walkthrough's Step 5 on a real node: a backend created with a local disk tier. Both real nodes
# of this machine share one host filesystem, so each backend here selects ONE real node
# (kubernetes.io/hostname) and its own directory; capacities are scaled to this machine (256Mi of
# DRAM a member, a 1Gi tier).
#   - an empty directory owned by uid 65532 (the seed's `install -d -o 65532 -g 0 -m 0750`):
#     TierWasEmpty=True/Empty, CAPACITY = DRAM + tier (1280Mi); a client in a Pod writes more than
#     the DRAM holds, evicted objects are offloaded into the directory (bucket files appear,
#     capacity.used counts them); with cleanAfterDelete the backend's deletion empties the
#     directory (which stays) with a cleanup Pod once every store Pod is gone, and the Pod goes with
#     the backend;
#   - a directory holding an earlier backend's files: TierWasEmpty=False/PreexistingContent naming
#     the node and the count, one KVCacheTierNotEmpty Warning, nothing removed;
#   - a directory the image's user cannot write: the seed's Troubleshooting row,
#     MembersMounted=False/MemberCrashLooping quoting "no write permission", phase Degraded.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
node=$(awk '{print $1}' <<<"$KVC_REAL_NODE_NAMES")
base=$(mktemp -d /var/tmp/kvcache-tier-XXXXXX)
chmod 0755 "$base"
cleanup_step_5() {
  [ -n "${ns:-}" ] && unadmit_namespace tier-empty "$ns"
  for x in tier-empty tier-full tier-locked; do delete_backend "$x"; done
  rm -rf "$base"
}
trap 'cleanup_step_5; kvc_cleanup' EXIT

# 1. An empty directory for the image's user.
install -d -o 65532 -g 0 -m 0750 "$base/empty"
# Single-tenant, so that the client below writes without a pool and a Binding, and the backend's
# deletion is not held by a reuse domain that still holds objects (TENANT_NOT_EMPTY).
kvc_assert_ok "tier-empty is created on $node with its tier at $base/empty (multiTenancy: false)" \
  tier_backend tier-empty "$node" "$base/empty" true '{multiTenancy: false}'

kvc_wait_for 240 "tier-empty is Ready" kvcb_phase_is tier-empty Ready
kvc_wait_for 120 "TierWasEmpty=True/Empty" kvcb_condition_is tier-empty TierWasEmpty True/Empty
kvc_wait_for 60 "CAPACITY counts the tier: 256Mi of DRAM + 1Gi = 1280Mi" \
  bash -c "[ \"\$(kubectl get kvcb tier-empty -o jsonpath='{.status.capacity.total}')\" = 1280Mi ]"

# A client writes 48 objects of 16 MiB (768 MiB) into 256 MiB of DRAM: evicted objects are offloaded.
ns=$(kvc_real_nodes_namespace step-5)
# The writer is a bare store client, not a Pod the webhook injected: the store's NetworkPolicies
# keep it out until the administrator admits its namespace.
kvc_assert_ok "the administrator admits namespace $ns to tier-empty (a NetworkPolicy)" admit_namespace tier-empty "$ns"
kvc_assert_ok "a client Pod (the store image's Python client) writes 768 MiB" kubectl -n "$ns" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: writer}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: $node}
  containers:
  - name: writer
    image: $(kubectl -n gpustack-system get configmap gpustack-settings -o jsonpath='{.data.kv-cache-backend-image}')
    imagePullPolicy: Never
    env:
    - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    command: [python3, -c]
    args:
    - |
      import os, sys, time
      from mooncake.store import MooncakeDistributedStore
      store = MooncakeDistributedStore()
      rc = store.setup(local_hostname=os.environ["POD_IP"], metadata_server="P2PHANDSHAKE",
                       global_segment_size=0, local_buffer_size=64 << 20, protocol="tcp",
                       rdma_devices="", master_server_addr="tier-empty-leader.gpustack-system.svc:50051")
      print("setup", rc, flush=True)
      ok = 0
      for i in range(48):
          rc = store.put(f"step-5-{i}", bytes([i % 251]) * (16 << 20))
          ok += rc == 0
          time.sleep(0.05)
      print("puts", ok, flush=True)
      store.close()
      sys.exit(0 if ok > 0 else 1)
YAML
kvc_wait_for 240 "the client's writes complete" \
  bash -c "[ \"\$(kubectl -n $ns get pod writer -o jsonpath='{.status.phase}')\" = Succeeded ]"
kubectl -n "$ns" logs writer 2>&1 | tail -3 >&2
kvc_wait_for 120 "evicted objects are offloaded into $base/empty (files appear)" \
  bash -c "[ -n \"\$(ls -A '$base/empty')\" ]"
kvc_log "the tier holds: $(du -sh "$base/empty" | cut -f1) in $(find "$base/empty" -type f | wc -l) files"
kvc_wait_for 60 "the master reports the tier's usage (capacity.used counts file bytes)" \
  bash -c "admin_curl tier-empty /metrics | awk '/^master_allocated_file_size_bytes / { exit !(\$2 > 0) }'"
kvc_wait_for 60 "capacity.used counts the tier's bytes (more than the 256Mi of DRAM)" bash -c \
  "[ \"\$(kubectl get kvcb tier-empty -o json | jq '.status.capacity.used | test(\"Gi\$\") or (sub(\"Mi\$\"; \"\") | tonumber > 256)')\" = true ]"
kvc_assert_ok "cleanAfterDelete: deleting tier-empty finishes" kubectl delete kvcb tier-empty --timeout=300s
kvc_assert_eq "the directory is kept, and emptied" "yes 0" \
  "$( [ -d "$base/empty" ] && echo yes || echo no) $(find "$base/empty" -mindepth 1 | wc -l)"
kvc_wait_for 60 "nothing of tier-empty is left in gpustack-system (the cleanup Pod goes with it)" bash -c \
  "[ -z \"\$(kubectl -n gpustack-system get all,sa,role,rolebinding,configmap -l app.kubernetes.io/instance=tier-empty -o name; kubectl -n gpustack-system get lease tier-empty-leader -o name 2>/dev/null)\" ]"

# 2. A directory that already holds files.
install -d -o 65532 -g 0 -m 0750 "$base/full"
for i in 1 2 3; do install -o 65532 -g 0 -m 0640 /dev/null "$base/full/old-bucket-$i"; done
kvc_assert_ok "tier-full is created with its tier at $base/full (3 files in it)" tier_backend tier-full "$node" "$base/full" false
kvc_wait_for 240 "TierWasEmpty=False/PreexistingContent" kvcb_condition_is tier-full TierWasEmpty False/PreexistingContent
kvc_assert_contains "the condition names the node and the count" "$node: 3" \
  "$(kvcb_field tier-full '{.status.conditions[?(@.type=="TierWasEmpty")].message}')"
# This backend's Warnings (by uid: Events of an earlier tier-full outlive it).
tier_warnings() {
  kubectl get events -A -o name --field-selector \
    "reason=KVCacheTierNotEmpty,type=Warning,involvedObject.uid=$(kubectl get kvcb tier-full -o jsonpath='{.metadata.uid}')" | wc -l
}
kvc_wait_for 30 "a KVCacheTierNotEmpty Warning is recorded" bash -c "[ \"\$($(declare -f tier_warnings); tier_warnings)\" -ge 1 ]"
sleep 20  # more than a pass
kvc_assert_eq "and only once" "1" "$(tier_warnings)"
kvc_assert_eq "nothing was removed" "3" "$(find "$base/full" -maxdepth 1 -name 'old-bucket-*' | wc -l)"
delete_backend tier-full
kvc_assert_eq "without cleanAfterDelete the deletion leaves the files" "3" \
  "$(find "$base/full" -maxdepth 1 -name 'old-bucket-*' | wc -l)"

# 3. A directory the image's user cannot write.
install -d -o 0 -g 0 -m 0700 "$base/locked"
kvc_assert_ok "tier-locked is created with its tier at $base/locked (root, 0700)" tier_backend tier-locked "$node" "$base/locked" false
kvc_wait_for 240 "MembersMounted=False/MemberCrashLooping (the seed's Troubleshooting row)" \
  kvcb_condition_is tier-locked MembersMounted False/MemberCrashLooping
kvc_assert_contains "the condition quotes the member's error" "no write permission" \
  "$(kvcb_field tier-locked '{.status.conditions[?(@.type=="MembersMounted")].message}')"
kvc_assert_eq "the phase is Degraded" "Degraded" "$(kvcb_field tier-locked '{.status.phase}')"
kvc_done
