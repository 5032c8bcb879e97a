#!/usr/bin/env bash
# A ModelDeployment attached through a pool on an external backend (contract §8), with the
# in-cluster operator; its engine Pods run on the fake GPU nodes (kwok).
#   - The pool's endpoint changes (the backend is pointed at another master): the pool publishes
#     the new client endpoint, the role is re-rendered against it with a new Pod-spec hash, and its
#     replicas roll ("Rolling"); each leaving replica is said (ReplicaLeaving) and CacheAttached
#     reads True again once the Binding's domain is registered on the new master.
#   - A replica evicted through the eviction API is said (ReplicaEvicted), naming the Pod.
#   - Roles on two different engine images are a RuntimeVersionSkew, naming both.
#   - A usedBy entry left behind by a deployment that is gone (its finalizer taken off by hand)
#     does not hold the Binding's deletion: the pool controller drops it and the Binding goes.
. "$(dirname "$0")/../lib.sh"
kvc_quota_init
kvc_store_up first --members 1 --segment 256MiB
first_rpc=$STORE_RPC
backend=ext-$KVC_ID pool=pool-$KVC_ID
ns=$(kvc_fresh_namespace md-endpoint)
kvc_external_backend "$backend"
kvc_pool "$pool" "$backend" 1Gi >/dev/null
kvc_binding "$ns" chat "$pool" 256Mi chat-$KVC_ID 16 bfloat16 >/dev/null
kvc_wait_for 60 "the Binding is Ready" kvc_phase_is kvcpb "$ns/chat" Ready

# model_deployment NAME ROLES-YAML: a ModelDeployment in $ns (reconciled by the test operator).
model_deployment() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata: {name: $1, namespace: $ns, labels: $KVC_LABELS}
spec:
  model: {name: Qwen/Qwen2.5-7B-Instruct}
  engine: {name: vLLM, image: gpustack/runner:cuda13.0-vllm0.29.0}
$2
YAML
}
master_of() {  # the master the role's client configuration names
  kubectl -n "$ns" get deploy "$1" -o json 2>/dev/null |
    jq -r '.spec.template.metadata.annotations["kvcache.gpustack.ai/client-config"] // "{}" | fromjson | .master_server_address // ""'
}
master_is() { [ "$(master_of "$1")" = "$2" ]; }
hash_of() { kubectl -n "$ns" get deploy "$1" -o jsonpath='{.spec.template.metadata.annotations.kvcache\.gpustack\.ai/pod-spec-hash}'; }
pods_of() { kubectl -n "$ns" get pods -l "app.kubernetes.io/instance=$1" -o json | jq -r '[.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name] | sort | join(" ")'; }
events_of() {  # events_of REASON: the notes of the Events with REASON on ModelDeployments in $ns
  kubectl -n "$ns" get events.events.k8s.io -o json |
    jq -r --arg r "$1" '.items[] | select(.regarding.kind == "ModelDeployment" and .reason == $r) | .regarding.name + ": " + .note'
}
has_event() { events_of "$1" | grep -qF "$2"; }

model_deployment chat "  kvCache: {poolRef: {name: chat}}
  roles:
  - {name: server, replicas: 2, resources: {accelerator: \"1\"}}"
kvc_wait_for 120 "the deployment is Ready" kvc_phase_is md "$ns/chat" Ready
kvc_assert_eq "CacheAttached" True/Attached "$(kvc_cond md "$ns/chat" CacheAttached)"
kvc_assert_eq "its role names the first master" "$first_rpc" "$(master_of chat-server)"
hash0=$(hash_of chat-server)
pods0=$(pods_of chat)
kvc_log "replicas before: $pods0 (hash $hash0)"

# --- the pool's endpoint changes -------------------------------------------------------------
kvc_store_up second --members 1 --segment 256MiB
t0=$SECONDS
kvc_external_backend "$backend"  # now pointing at the second master
kvc_wait_for 60 "the pool publishes the new client endpoint" \
  bash -c "[ \"\$(kubectl get kvcp $pool -o jsonpath='{.status.clientEndpoint}')\" = '$STORE_RPC' ]"
kvc_wait_for 60 "the role is re-rendered against the new master" master_is chat-server "$STORE_RPC"
kvc_assert_ok "with a new Pod-spec hash" test "$(hash_of chat-server)" != "$hash0"
kvc_wait_for 180 "its replicas roll (the rollout completes)" \
  kubectl -n "$ns" rollout status deploy/chat-server --timeout=5s
kvc_log "endpoint change -> rollout complete: $((SECONDS - t0))s"
pods1=$(pods_of chat)
kvc_log "replicas after: $pods1"
for p in $pods0; do
  case " $pods1 " in
    *" $p "*) _kvc_fail "replica $p was replaced" "$pods1" ;;
    *) _kvc_pass "replica $p was replaced" ;;
  esac
done
all_said_leaving() {
  local p; for p in $pods0; do has_event ReplicaLeaving "$ns/$p" || return 1; done
}
kvc_wait_for 60 "each leaving replica is said (ReplicaLeaving), naming it" all_said_leaving
kvc_log "ReplicaLeaving: $(events_of ReplicaLeaving | head -1)"
kvc_wait_for 90 "CacheAttached is True again, against the new master" kvc_cond_is md "$ns/chat" CacheAttached True/Attached
kvc_wait_for 60 "and the deployment is Ready" kvc_phase_is md "$ns/chat" Ready

# --- an eviction --------------------------------------------------------------------------------
victim=$(pods_of chat | awk '{print $1}')
kvc_assert_ok "a replica is evicted through the eviction API" kubectl -n "$ns" create --raw \
  "/api/v1/namespaces/$ns/pods/$victim/eviction" -f - <<JSON
{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "$victim", "namespace": "$ns"}}
JSON
kvc_wait_for 60 "the eviction is said (ReplicaEvicted), naming the Pod" has_event ReplicaEvicted "$ns/$victim"
kvc_log "ReplicaEvicted: $(events_of ReplicaEvicted | head -1)"
kvc_assert_contains "as an eviction by the eviction API" "by the eviction API" "$(events_of ReplicaEvicted)"

# --- two engine builds ------------------------------------------------------------------------
model_deployment skew "  roles:
  - {name: a, replicas: 1, resources: {accelerator: \"1\"}}
  - {name: b, replicas: 1, image: gpustack/runner:cuda13.0-vllm0.28.0, resources: {accelerator: \"1\"}}"
kvc_wait_for 120 "a deployment whose roles run two images is Ready" kvc_phase_is md "$ns/skew" Ready
kvc_wait_for 60 "and said to skew (RuntimeVersionSkew)" has_event RuntimeVersionSkew "run 2 engine builds"
kvc_log "RuntimeVersionSkew: $(events_of RuntimeVersionSkew | head -1)"
kvc_assert_contains "naming the other image and its role" "vllm0.28.0 (role b: Pod skew-b-" "$(events_of RuntimeVersionSkew)"
kvc_assert_ok "the skewed deployment is deleted" kubectl -n "$ns" delete md skew --timeout=120s

# --- a usedBy entry left behind -----------------------------------------------------------------
kvc_assert_ok "the attached deployment is deleted" kubectl -n "$ns" delete md chat --timeout=120s
kvc_wait_for 30 "it left the Binding's usedBy" \
  bash -c "[ \"\$(kubectl -n $ns get kvcpb chat -o jsonpath='{.status.usedBy}')\" = '' ]"
# What a deployment deleted with its finalizer taken off by hand leaves: its entry, and no object.
kvc_assert_ok "an entry of a deployment that does not exist is in usedBy" kubectl -n "$ns" patch kvcpb chat \
  --subresource=status --type=merge -p '{"status":{"usedBy":[{"kind":"ModelDeployment","namespace":"","name":"forced-off"}]}}'
t0=$SECONDS
kvc_assert_ok "the Binding's deletion is accepted" kubectl -n "$ns" delete kvcpb chat --wait=false
kvc_wait_for 90 "the entry holds nothing: the Binding is released" kvc_gone kvcpb "$ns/chat"
kvc_log "Binding deletion with a left-behind entry -> released: $((SECONDS - t0))s"
kvc_done
