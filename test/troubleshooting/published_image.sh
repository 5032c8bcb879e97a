#!/usr/bin/env bash
# Step 1's "a published upstream image named in spec.image works until Step 4 and then does not"
# (issue 27 §3), with a stand-in for such an image built here from the same wheel (images/build.sh
# upstream: Mooncake's mooncake_master and client, none of our binaries), at Step 4's three
# replicas:
#   - admission warns: not this project's build, one replica, no election, no TLS on the admin
#     port, and the fix;
#   - the store runs Mooncake's own processes (the image has no kvcache): Ready, CAPACITY read
#     from the store, one replica, ElectionObserved=False/NoHolder naming the image and the
#     Setting kv-cache-backend-image;
#   - it works: a pool and a Binding on it are granted against the master's ledger (the operator
#     reads and writes it over the master's plain admin port), and a client the webhook configured
#     puts and gets an object under the Binding's tenant;
#   - the admin port without TLS is still closed to a Pod that is not the operator's (and answers
#     it once the store is opened to its namespace: the NetworkPolicy is what guards it);
#   - the fix: spec.image removed, the Setting's build rolls out, the election runs
#     (ElectionObserved=True/Electing, three replicas) and the Binding stays granted.
set -uo pipefail
. "$(dirname "$0")/../managed/lib.sh"
kvc_init
kvc_require_real_nodes
b=published
sys=$KVC_SYSTEM_NAMESPACE
cleanup_published() {
  [ -n "${ns:-}" ] && kubectl -n "$ns" delete pods,kvcpb --all --timeout=120s >/dev/null 2>&1
  kubectl delete kvcp $b --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'unadmit_namespace $b "${ns:-none}"; cleanup_published; kvc_cleanup' EXIT

image=$(fixture_image upstream) || { kvc_log "the stand-in published image could not be built or imported"; exit 1; }
kvc_log "the stand-in published image $image is imported into the real nodes"

warnings=$(kubectl apply -f - 2>&1 >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: $b}
spec:
  type: Mooncake
  image: $image
  connection:
    managed:
      leader: {replicas: 3}
      members:
        - nodeSelector: {type: real}
          medium: DRAM
          capacityPerMember: 256Mi
YAML
)
kvc_log "kubectl apply said: $warnings"
kvc_assert_contains "admission warns: not this project's build" "is not this project's store build" "$warnings"
kvc_assert_contains "one replica, no election" "leader.replicas 3 runs one replica" "$warnings"
kvc_assert_contains "and names the fix" "Remove spec.image to run the Setting's build" "$warnings"

t0=$SECONDS
kvc_wait_for 240 "it is Ready on Mooncake's own processes" kvcb_phase_is $b Ready
kvc_log "Ready $((SECONDS - t0)) s after the apply"
kvc_wait_for 60 "CAPACITY 512Mi: both members mounted" \
  bash -c "[ \"\$(kubectl get kvcb $b -o jsonpath='{.status.capacity.total}')\" = 512Mi ]"
leader=$(store_pods $b leader)
kvc_assert_eq "the leader runs mooncake_master itself" '["mooncake_master"]' \
  "$(kubectl -n "$sys" get pod "$leader" -o jsonpath='{.spec.containers[0].command}')"
kvc_assert_eq "the image has none of our binaries" none \
  "$(kubectl -n "$sys" exec "$leader" -c leader -- sh -c 'command -v kvcache || echo none')"
kvc_assert_eq "one leader replica" 1 \
  "$(kubectl -n "$sys" get deployment $b-leader -o jsonpath='{.spec.replicas}')"
kvc_wait_for 30 "ElectionObserved=False/NoHolder" kvcb_condition_is $b ElectionObserved False/NoHolder
kvc_wait_for 30 "kvcache diagnose names it: A ready leader and a holderless Lease" \
  diagnose_finds KVCacheBackend $b "A ready leader and a holderless Lease"
message=$(object_message kvcb $b ElectionObserved)
kvc_log "ElectionObserved: $message"
kvc_assert_contains "naming the image" "$image" "$message"
kvc_assert_contains "and the Setting as the fix" "the Setting kv-cache-backend-image supplies" "$message"

ns=$(kvc_real_nodes_namespace published)
kvc_assert_ok "a pool on it" managed_pool $b $b 512Mi
kvc_assert_ok "a Binding on it" pool_binding "$ns" $b team 128Mi
kvc_wait_for 90 "the Binding is granted against the master's ledger" binding_granted "$ns" team
kvc_assert_eq "its effectiveQuota" 128Mi \
  "$(kubectl -n "$ns" get kvcpb team -o jsonpath='{.status.effectiveQuota}')"

# A store client the webhook configures (the vLLM file vehicle), on a real node: one put and one
# get under the Binding's tenant, then exit.
injected_store_pod "$ns" client team "$image" "put = store.put('published-probe', b'p' * 65536) if rc == 0 else None
got = store.get('published-probe') if rc == 0 else b''
print(json.dumps({'setup': rc, 'put': put, 'get': len(got), 'tenant': config['tenant_id']}), flush=True)
store.close()"
client_done() {
  local phase; phase=$(kubectl -n "$ns" get pod client -o jsonpath='{.status.phase}' 2>/dev/null)
  [ "$phase" = Succeeded ] || [ "$phase" = Failed ]
}
kvc_wait_for 120 "the client ran" client_done
result=$(kubectl -n "$ns" logs client 2>/dev/null | grep '"setup"' | tail -1)
kvc_log "client: $result"
kvc_assert_contains "the client's setup, put and get succeed under the Binding's tenant" \
  '{"setup": 0, "put": 0, "get": 65536, "tenant": "team"}' "$result"

# From the attacker's side: a Pod of the same namespace that is not the operator's, plain HTTP to
# the admin port through the leader Service. Then the same with the store opened to the namespace
# (admit_namespace), to show what the NetworkPolicy alone stands in front of: the master answers.
outsider() {
  kubectl -n "$ns" delete pod outsider --ignore-not-found --wait=true >/dev/null 2>&1
  kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: outsider}
spec:
  restartPolicy: Never
  nodeSelector: {type: real}
  containers:
  - name: outsider
    image: $image
    imagePullPolicy: Never
    command: [python3, -c]
    args:
    - |
      import socket, urllib.request
      host = "$b-leader.$sys.svc"
      print("resolved", socket.gethostbyname(host))
      try:
          urllib.request.urlopen(f"http://{host}:9003/api/v1/tenant_quotas", timeout=5)
          print("admin port answered")
      except Exception as error:
          print("admin port closed:", repr(error))
YAML
  kvc_wait_for 60 "the outsider ran" outsider_done >&2 || return 1
  kubectl -n "$ns" logs outsider 2>/dev/null
}
outsider_done() { [ "$(kubectl -n "$ns" get pod outsider -o jsonpath='{.status.phase}' 2>/dev/null)" = Succeeded ]; }
seen=$(outsider)
kvc_log "outsider: $seen"
kvc_assert_contains "the outsider resolves the leader Service" "resolved " "$seen"
kvc_assert_contains "but the plain admin port is closed to it" "admin port closed" "$seen"
admit_namespace $b "$ns"
for _ in 1 2 3; do  # the policy implementation takes the new rule within a second or two
  seen=$(outsider)
  case $seen in *"admin port answered"*) break ;; esac
done
kvc_assert_contains "with the store opened to its namespace, the master answers it in plain HTTP" \
  "admin port answered" "$seen"
unadmit_namespace $b "$ns"

t0=$SECONDS
kvc_assert_ok "the fix: spec.image removed" kubectl patch kvcb $b --type=json \
  -p '[{"op":"remove","path":"/spec/image"}]'
kvc_wait_for 300 "the election runs: ElectionObserved=True/Electing" \
  kvcb_condition_is $b ElectionObserved True/Electing
kvc_wait_for 180 "three leader replicas (one serving, two standbys)" \
  bash -c "[ \"\$(kubectl -n $sys get deployment $b-leader -o jsonpath='{.spec.replicas}')\" = 3 ]"
kvc_log "electing $((SECONDS - t0)) s after spec.image was removed"
leader=$(kubectl -n "$sys" get pods -l "app.kubernetes.io/instance=$b,mooncake.io/store-role=leader" \
  -o jsonpath='{.items[0].metadata.name}')
kvc_assert_eq "the leader runs this project's launcher" '["kvcache","store","leader"]' \
  "$(kubectl -n "$sys" get pod "$leader" -o jsonpath='{.spec.containers[0].command}')"
kvc_wait_for 120 "the Binding is granted on the new master" binding_granted "$ns" team
kvc_done
