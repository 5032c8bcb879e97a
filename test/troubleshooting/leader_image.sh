#!/usr/bin/env bash
# Troubleshooting row "KVCacheBackend stuck in Provisioning or Error — LeaderAvailable=False"
# (issue 27 §1) for the first cause it names: a store image that cannot be had. spec.image names an
# image no node holds, with imagePullPolicy Never (so nothing leaves this machine: the kubelet
# says ErrImageNeverPull where a registry would say ErrImagePull / ImagePullBackOff).
#   - LeaderAvailable=False with the kubelet's waiting reason, its message naming the leader Pod
#     and the image; phase Error;
#   - once spec.image is removed (the Setting kv-cache-backend-image applies), the store runs and
#     the backend is Ready.
set -uo pipefail
. "$(dirname "$0")/../managed/lib.sh"
kvc_init
kvc_require_real_nodes
b=leader-image
image=kvcache.local/store:does-not-exist
trap 'delete_backend $b; kvc_cleanup' EXIT

kvc_assert_ok "backend $b with spec.image $image (imagePullPolicy Never)" kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: $b}
spec:
  type: Mooncake
  image: $image
  imagePullPolicy: Never
  connection:
    managed:
      leader: {}
      members:
        - nodeSelector: {type: real}
          medium: DRAM
          capacityPerMember: 256Mi
YAML
kvc_wait_for 120 "LeaderAvailable=False/ErrImageNeverPull" kvcb_condition_is $b LeaderAvailable False/ErrImageNeverPull
kvc_wait_for 30 "kvcache diagnose names it: KVCacheBackend stuck in Provisioning or Error" \
  diagnose_finds KVCacheBackend $b "KVCacheBackend stuck in Provisioning or Error"
message=$(object_message kvcb $b LeaderAvailable)
kvc_log "LeaderAvailable: $message"
kvc_assert_contains "naming the leader Pod" "Pod $b-leader-" "$message"
kvc_assert_contains "and the image" "$image" "$message"
kvc_wait_for 30 "phase Error" kvcb_phase_is $b Error

t0=$SECONDS
kvc_assert_ok "spec.image and spec.imagePullPolicy are removed" \
  kubectl patch kvcb $b --type=json -p '[{"op":"remove","path":"/spec/image"},{"op":"remove","path":"/spec/imagePullPolicy"}]'
kvc_wait_for 240 "the store runs: Ready" kvcb_phase_is $b Ready
kvc_assert_eq "LeaderAvailable=True/Serving" True/Serving "$(kvcb_condition $b LeaderAvailable)"
kvc_log "Ready $((SECONDS - t0)) s after the image was removed"
kvc_done
