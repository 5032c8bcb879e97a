#!/usr/bin/env bash
# Troubleshooting row "Member init container restarts — MembersMounted=False/
# MemberInitCrashLooping" (issue 27 §1): a disk-tier group whose own image has no shell. The
# directory survey runs `sh -c`, so its init container cannot start and is restarted. The image is
# a store image built without a shell (images/build.sh noshell), in the store's own repository
# (so it counts as this project's build and the survey runs in it).
#   - MembersMounted=False/MemberInitCrashLooping naming the Pod, with the restart count, the exit
#     code and the runtime's message (no `sh` to execute), phase Degraded;
#   - the group's image removed (spec.image, here the Setting's build, applies), the operator
#     replaces the member Pod, which surveys and mounts: Ready, MembersMounted=True/Mounted.
set -uo pipefail
. "$(dirname "$0")/../managed/lib.sh"
kvc_init
kvc_require_real_nodes
node=$(awk '{print $1}' <<<"$KVC_REAL_NODE_NAMES")
b=member-init
base=$(mktemp -d /var/tmp/kvcache-init-XXXXXX)
chmod 0755 "$base"
dir=$base/tier
install -d -o 65532 -g 0 -m 0750 "$dir"
trap 'delete_backend $b; rm -rf "$base"; kvc_cleanup' EXIT

image=$(fixture_image noshell) || { kvc_log "the store image without a shell could not be built or imported"; exit 1; }
kvc_log "the store image without a shell $image is imported into the real nodes"

kvc_assert_ok "backend $b on $node, its tier group's image $image" kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: $b}
spec:
  type: Mooncake
  connection:
    managed:
      leader: {}
      members:
        - nodeSelector: {kubernetes.io/hostname: $node}
          medium: DRAM
          capacityPerMember: 256Mi
          image: $image
          localDisks:
            - path: $dir
              capacity: 1Gi
YAML
kvc_wait_for 180 "MembersMounted=False/MemberInitCrashLooping" \
  kvcb_condition_is $b MembersMounted False/MemberInitCrashLooping
kvc_wait_for 30 "kvcache diagnose names it: Member init container restarts" \
  diagnose_finds KVCacheBackend $b "Member init container restarts"
message=$(object_message kvcb $b MembersMounted)
kvc_log "MembersMounted: $message"
member=$(store_pods $b member-0 | head -1)
kvc_assert_contains "naming the Pod" "$member" "$message"
kvc_assert_contains "with the restart count" "restarted" "$message"
kvc_assert_contains "and the runtime's message: no shell" '"sh"' "$message"
kvc_assert_eq "phase Degraded" Degraded "$(kvcb_field $b '{.status.phase}')"

t0=$SECONDS
kvc_assert_ok "the group's image removed" kubectl patch kvcb $b --type=json \
  -p '[{"op":"remove","path":"/spec/connection/managed/members/0/image"}]'
kvc_wait_for 240 "Ready once the replaced member surveyed and mounted" kvcb_phase_is $b Ready
kvc_assert_eq "MembersMounted=True/Mounted" True/Mounted "$(kvcb_condition $b MembersMounted)"
kvc_log "Ready $((SECONDS - t0)) s after the image was removed"
kvc_done
