#!/usr/bin/env bash
# The CRD schemas refuse bad objects on their own (no webhook involved): a missing required field,
# an unknown enum value, an unknown field, out-of-range numbers and quantities, and every edit of an
# immutable field; and they accept the edits that are allowed.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
ns=$(kvc_fresh_namespace schema)
sfx=$(date +%s)-$RANDOM
B=kvcb-$sfx P=kvcp-$sfx
kvc_register_cluster_object "kvcachebackend/$B"
kvc_register_cluster_object "kvcachebackend/$B-x"
kvc_register_cluster_object "kvcachepool/$P"
kvc_register_cluster_object "kvcachepool/$P-x"

apply() { kubectl apply --server-side --validate=strict -f - ; }

backend() { # backend NAME [MEMBER-EXTRA-LINE] [LEADER-FIELDS]
  printf '%s\n' \
    'apiVersion: worker.gpustack.ai/v1' \
    'kind: KVCacheBackend' \
    "metadata: {name: $1}" \
    'spec:' \
    '  connection:' \
    '    managed:' \
    "      leader: {${3:-}}" \
    '      members:' \
    '      - nodeSelector: {kubernetes.io/os: linux}' \
    '        medium: DRAM' \
    '        capacityPerMember: 1Gi' \
    "        ${2:-}"
}
binding() { # binding NAME [QUOTA-LINE] [DOMAIN-EXTRA]
  local quota=${2:-}
  [ -n "$quota" ] || quota='quota: {ceiling: 1Gi}'
  printf '%s\n' \
    'apiVersion: worker.gpustack.ai/v1' \
    'kind: KVCachePoolBinding' \
    "metadata: {name: $1, namespace: $ns}" \
    'spec:' \
    "  poolRef: {name: $P}" \
    "  $quota" \
    "  domain: {blockSize: 16, dtype: bfloat16${3:-}}"
}
md() { # md NAME [ENGINE] [ROLE-EXTRA]
  printf '%s\n' \
    'apiVersion: worker.gpustack.ai/v1' \
    'kind: ModelDeployment' \
    "metadata: {name: $1, namespace: $ns}" \
    'spec:' \
    '  model: {name: Qwen/Qwen2.5-7B-Instruct}' \
    "  engine: {name: ${2:-vLLM}, version: \"0.29.0\"}" \
    '  kvCache: {poolRef: {name: b1}}' \
    '  roles:' \
    "  - {name: server, replicas: 1${3:-}}"
}
external() { # external NAME ENDPOINTS-FLOW
  printf '%s\n' \
    'apiVersion: worker.gpustack.ai/v1' \
    'kind: KVCacheBackend' \
    "metadata: {name: $1}" \
    "spec: {connection: {external: {endpoints: $2}}}"
}
pool() { # pool NAME BACKENDS-FLOW
  printf '%s\n' \
    'apiVersion: worker.gpustack.ai/v1' \
    'kind: KVCachePool' \
    "metadata: {name: $1}" \
    "spec: {backends: $2, quota: {total: 4Gi}}"
}

# --- valid objects, edited further down --------------------------------------------------------
kvc_assert_ok "a valid managed backend is admitted" apply < <(backend "$B")
kvc_assert_ok "a valid pool is admitted" apply < <(pool "$P" "[$B]")
kvc_assert_ok "a valid Binding is admitted" apply < <(binding b1)
kvc_assert_ok "a valid ModelDeployment is admitted" apply < <(md m1)
kvc_assert_ok "a valid external backend is admitted (dry run)" \
  kubectl apply --server-side --validate=strict --dry-run=server -f - \
  < <(external "$B-x" '[{name: Client, address: "127.0.0.1:50051"}, {name: Admin, address: "127.0.0.1:9003"}]')

# --- refused at create -------------------------------------------------------------------------
kvc_assert_refused "a Binding without quota.ceiling is refused" "spec.quota.ceiling: Required value" \
  apply < <(binding b-noceiling "quota: {}")
kvc_assert_refused "a Binding without domain is refused" "spec.domain: Required value" \
  apply < <(binding b-nodom | sed '/^  domain:/d')
kvc_assert_refused "a Binding with ceiling 0 is refused" "must be greater than zero" \
  apply < <(binding b-zero "quota: {ceiling: '0'}")
kvc_assert_refused "a Binding with a non-quantity ceiling is refused" "spec.quota.ceiling" \
  apply < <(binding b-nq "quota: {ceiling: lots}")
kvc_assert_refused "a Binding domain.name that is not a DNS label is refused" "spec.domain.name" \
  apply < <(binding b-badname "" ", name: Team_A")
kvc_assert_refused "a Binding dtype in upper case is refused" "spec.domain.dtype" \
  apply < <(binding b-upper | sed 's/dtype: bfloat16/dtype: BF16/')
kvc_assert_refused "an unknown member medium is refused" 'Unsupported value: "SSD"' \
  apply < <(backend "$B-x" | sed 's/medium: DRAM/medium: SSD/')
kvc_assert_refused "an unknown transport protocol is refused" 'Unsupported value: "HIP"' \
  apply < <(backend "$B-x" "transport: {protocol: HIP}")
kvc_assert_refused "an unknown engine spelling is refused" 'Unsupported value: "vllm"' apply < <(md m-bad vllm)
kvc_assert_refused "an unknown role kind spelling is refused" 'Unsupported value: "server"' \
  apply < <(md m-bad2 vLLM ", kind: server")
kvc_assert_refused "leader.replicas 6 is refused" "spec.connection.managed.leader.replicas" \
  apply < <(backend "$B-x" "" "replicas: 6")
kvc_assert_refused "leader.replicas 3 with electionBackend None is refused" "requires leader.electionBackend Kubernetes" \
  apply < <(backend "$B-x" "" "replicas: 3, electionBackend: None")
kvc_assert_refused "an unknown field (spec.metadata) is refused by server-side apply" '.spec.metadata: field not declared in schema' \
  apply < <(backend "$B-x" | sed 's/^spec:$/spec:\n  metadata: {}/')
kvc_assert_refused "an unknown field (spec.metadata) is refused by strict create" 'unknown field "spec.metadata"' \
  kubectl create --validate=strict -f - < <(backend "$B-x" | sed 's/^spec:$/spec:\n  metadata: {}/')
kvc_assert_refused "a backend with neither managed nor external is refused" \
  "exactly one of spec.connection.managed and spec.connection.external" \
  apply < <(printf '%s\n' 'apiVersion: worker.gpustack.ai/v1' 'kind: KVCacheBackend' "metadata: {name: $B-x}" 'spec: {connection: {}}')
kvc_assert_refused "a backend with both managed and external is refused" \
  "exactly one of spec.connection.managed and spec.connection.external" \
  apply < <(backend "$B-x" | sed 's/^    managed:$/    external: {endpoints: [{name: Client, address: "h:1"}, {name: Admin, address: "h:2"}]}\n    managed:/')
kvc_assert_refused "an external backend naming only Client is refused" "must name exactly Client and Admin" \
  apply < <(external "$B-x" '[{name: Client, address: "127.0.0.1:50051"}]')
kvc_assert_refused "an external endpoint name outside Client/Admin is refused" 'Unsupported value: "Metrics"' \
  apply < <(external "$B-x" '[{name: Client, address: "127.0.0.1:50051"}, {name: Metrics, address: "127.0.0.1:9003"}]')
kvc_assert_refused "an external address with port 70000 is refused" "1..65535" \
  apply < <(external "$B-x" '[{name: Client, address: "127.0.0.1:70000"}, {name: Admin, address: "127.0.0.1:9003"}]')
kvc_assert_refused "a disk tier with capacityPerMember under 16Mi is refused" "at least 16Mi" \
  apply < <(backend "$B-x" "localDisks: [{path: /var/lib/kvcache}]" | sed 's/capacityPerMember: 1Gi/capacityPerMember: 8Mi/')
kvc_assert_refused "a disk tier path with a .. component is refused" "'..'" \
  apply < <(backend "$B-x" "localDisks: [{path: /var/../etc}]")
kvc_assert_refused "a disk tier path inside /dev/infiniband is refused" "/dev/infiniband" \
  apply < <(backend "$B-x" "localDisks: [{path: /dev/infiniband/x}]")
kvc_assert_refused "eviction.enabled false with a policy is refused" "cannot be set with eviction.enabled false" \
  apply < <(backend "$B-x" "localDisks: [{path: /var/lib/kvcache, eviction: {enabled: false, policy: LRU}}]")
kvc_assert_refused "a pool naming two backends is refused" "spec.backends" apply < <(pool "$P-x" "[a, b]")
kvc_assert_refused "a pool naming no backend is refused" "spec.backends" apply < <(pool "$P-x" "[]")
kvc_assert_refused "a ModelDeployment without roles is refused" "spec.roles" \
  apply < <(md m-noroles | sed '/roles:/,$d')
kvc_assert_refused "a ModelDeployment with neither engine.version, engine.image nor role images is refused" \
  "spec.engine.version (or spec.engine.image) is required" apply < <(md m-nover | sed 's/, version: "0.29.0"//')
kvc_assert_ok "a ModelDeployment whose every role names an image needs no engine.version (dry run)" \
  kubectl apply --server-side --validate=strict --dry-run=server -f - \
  < <(md m-img vLLM ", image: example.invalid/vllm:1" | sed 's/, version: "0.29.0"//')
kvc_assert_refused "a ModelDeployment with roles[].replicas 0 is refused" "spec.roles[0].replicas" \
  apply < <(md m-zero | sed 's/replicas: 1/replicas: 0/')

# --- immutable fields --------------------------------------------------------------------------
kvc_assert_refused "editing Binding domain.dtype is refused" "spec.domain.dtype is immutable" \
  kubectl -n "$ns" patch kvcpb b1 --type=merge -p '{"spec":{"domain":{"dtype":"float16"}}}'
kvc_assert_refused "editing Binding domain.blockSize is refused" "spec.domain.blockSize is immutable" \
  kubectl -n "$ns" patch kvcpb b1 --type=merge -p '{"spec":{"domain":{"blockSize":32}}}'
kvc_assert_refused "editing Binding domain.name is refused" "spec.domain.name is immutable" \
  kubectl -n "$ns" patch kvcpb b1 --type=merge -p '{"spec":{"domain":{"name":"other"}}}'
kvc_assert_refused "editing Binding poolRef.name is refused" "spec.poolRef.name is immutable" \
  kubectl -n "$ns" patch kvcpb b1 --type=merge -p '{"spec":{"poolRef":{"name":"another-pool"}}}'
kvc_assert_refused "editing pool backends is refused" "spec.backends is immutable" \
  kubectl patch kvcp "$P" --type=merge -p '{"spec":{"backends":["another-backend"]}}'
kvc_assert_refused "editing members[0].medium is refused" "members[].medium is immutable" \
  kubectl patch kvcb "$B" --type=json -p '[{"op":"replace","path":"/spec/connection/managed/members/0/medium","value":"VRAM"}]'
kvc_assert_refused "adding a disk tier to a running group is refused" "cannot gain, lose or re-path a local disk tier" \
  kubectl patch kvcb "$B" --type=json -p '[{"op":"add","path":"/spec/connection/managed/members/0/localDisks","value":[{"path":"/var/lib/kvcache"}]}]'
kvc_assert_refused "editing ModelDeployment engine.name is refused" "spec.engine.name is frozen" \
  kubectl -n "$ns" patch md m1 --type=merge -p '{"spec":{"engine":{"name":"SGLang"}}}'
kvc_assert_refused "editing ModelDeployment model.name is refused" "spec.model.name is frozen" \
  kubectl -n "$ns" patch md m1 --type=merge -p '{"spec":{"model":{"name":"other/model"}}}'
kvc_assert_refused "editing ModelDeployment kvCache is refused" "spec.kvCache is frozen" \
  kubectl -n "$ns" patch md m1 --type=merge -p '{"spec":{"kvCache":{"poolRef":{"name":"b2"}}}}'
kvc_assert_refused "removing ModelDeployment kvCache is refused" "spec.kvCache is frozen" \
  kubectl -n "$ns" patch md m1 --type=json -p '[{"op":"remove","path":"/spec/kvCache"}]'
kvc_assert_refused "editing roles[].size is refused" "roles[].size is frozen" \
  kubectl -n "$ns" patch md m1 --type=json -p '[{"op":"replace","path":"/spec/roles/0/size","value":2}]'
kvc_assert_refused "editing roles[].kind is refused" "roles[].kind is frozen" \
  kubectl -n "$ns" patch md m1 --type=json -p '[{"op":"replace","path":"/spec/roles/0/kind","value":"Prefill"}]'
kvc_assert_refused "adding a role is refused" "the set of spec.roles is frozen" \
  kubectl -n "$ns" patch md m1 --type=json -p '[{"op":"add","path":"/spec/roles/-","value":{"name":"extra"}}]'

# --- allowed edits -----------------------------------------------------------------------------
kvc_assert_ok "raising the Binding ceiling is allowed" \
  kubectl -n "$ns" patch kvcpb b1 --type=merge -p '{"spec":{"quota":{"ceiling":"2Gi"}}}'
kvc_assert_ok "appending a member group is allowed" \
  kubectl patch kvcb "$B" --type=json -p '[{"op":"add","path":"/spec/connection/managed/members/-","value":{"nodeSelector":{"kvcache":"true"},"medium":"VRAM","capacityPerMember":"2Gi"}}]'
kvc_assert_ok "editing a group's capacity in place is allowed" \
  kubectl patch kvcb "$B" --type=json -p '[{"op":"replace","path":"/spec/connection/managed/members/0/capacityPerMember","value":"3Gi"}]'
kvc_assert_ok "removing the last member group is allowed" \
  kubectl patch kvcb "$B" --type=json -p '[{"op":"remove","path":"/spec/connection/managed/members/1"}]'
kvc_assert_ok "scaling a role is allowed" \
  kubectl -n "$ns" patch md m1 --type=json -p '[{"op":"replace","path":"/spec/roles/0/replicas","value":3}]'
kvc_assert_ok "editing engine.version is allowed" \
  kubectl -n "$ns" patch md m1 --type=merge -p '{"spec":{"engine":{"version":"0.30.0"}}}'
kvc_assert_ok "the status subresource accepts a status write" \
  kubectl -n "$ns" patch kvcpb b1 --subresource=status --type=merge -p '{"status":{"phase":"Ready","effectiveQuota":"1Gi"}}'
kvc_assert_ok "a spec write through the main resource is still allowed after a status write" \
  kubectl -n "$ns" patch kvcpb b1 --type=merge -p '{"spec":{"quota":{"ceiling":"3Gi"}},"status":{"phase":"Ignored"}}'
kvc_assert_eq "status written through the main resource is ignored (status subresource)" "Ready" \
  "$(kubectl -n "$ns" get kvcpb b1 -o jsonpath='{.status.phase}' 2>&1)"
kvc_done
