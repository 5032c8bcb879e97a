# shellcheck shell=bash
# Helpers of the quota integration tests: the pool and Binding controllers and their admission,
# through the real API server and the in-cluster operator of test/webhook/operator.sh (whose
# controllers reconcile only objects labelled kvcache-test.gpustack.ai/reconcile=true, and whose
# pool, Binding and backend validation applies only to objects labelled
# kvcache-test.gpustack.ai/validate=true), against real Mooncake masters that each test starts
# for itself (test/store/store.sh) on the bridge address the operator's Pods reach.
#
#   . "$(dirname "$0")/../lib.sh"
#   kvc_quota_init                      # cluster env, operator env, a unique suffix $KVC_ID
#   kvc_store_up NAME [store.sh opts]   # a store in its own dir; sets STORE_ADMIN, STORE_RPC
#   kvc_external_backend NAME           # a backend pointing at the store started last
#   kvc_pool NAME BACKEND TOTAL
#   kvc_binding NS NAME POOL CEILING [DOMAIN] [BLOCK] [DTYPE]   (validated and reconciled)
#   kvc_jq KIND [NS/]NAME FILTER        # jq on the object's JSON ("" when it does not exist)
#   kvc_cond KIND [NS/]NAME TYPE        # "Status/Reason" of a condition
#   kvc_ledger                          # the store's ledger: "tenant=requested/effective ..."
. "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"

KVC_LABELS='{"kvcache-test.gpustack.ai/reconcile":"true","kvcache-test.gpustack.ai/validate":"true"}'

kvc_quota_init() {
  kvc_init
  # shellcheck disable=SC1091
  . "${KVC_OPERATOR_DIR:?KVC_OPERATOR_DIR is required}/operator.env"
  KVC_ID=$(printf '%x%x' "$(date +%s)" "$RANDOM" | tail -c 7)
  KVC_STORES=()
  trap 'kvc_quota_cleanup' EXIT
  KVCACHE=$KVC_OPERATOR_BINARY
  STORE_SH=$KVC_REPO_DIR/test/store/store.sh
  # Every store on the bridge address (restarts included): the in-cluster operator reaches the
  # host there, never on 127.0.0.1.
  export KVC_STORE_HOST=$KVC_HOST_ADDRESS
}

kvc_quota_cleanup() {
  local rc=$? dir obj ns b
  # The stores go with the test, so nothing could release the finalizers after it: delete what
  # the test made, strip the finalizers (of deleting objects, which the operator leaves alone),
  # then stop the stores.
  if [ -n "${KVC_CLEANUP_FILE:-}" ] && [ -f "$KVC_CLEANUP_FILE" ] && [ "${KVC_KEEP_NAMESPACES:-0}" != 1 ]; then
    tac "$KVC_CLEANUP_FILE" | while read -r obj; do
      [ -n "$obj" ] && kubectl delete "$obj" --ignore-not-found --wait=false >/dev/null 2>&1 || true
    done
    while read -r obj; do
      case $obj in
        namespace/*)
          ns=${obj#namespace/}
          for b in $(kubectl -n "$ns" get kvcpb,md -o name 2>/dev/null); do
            kubectl -n "$ns" patch "$b" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
          done ;;
        *) kubectl patch "$obj" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true ;;
      esac
    done <"$KVC_CLEANUP_FILE"
    rm -f "$KVC_CLEANUP_FILE"
  else
    kvc_cleanup
  fi
  for dir in "${KVC_STORES[@]}"; do
    "$STORE_SH" down "$dir" >/dev/null 2>&1 || true
  done
  return $rc
}

# kvc_store_up NAME [store.sh options]: a real master (and members) of its own.
kvc_store_up() {
  local name=$1 dir; shift
  dir=${KVC_QUOTA_STORE_ROOT:-/tmp}/kvc-quota-$KVC_ID-$name
  KVC_STORES+=("$dir")
  "$STORE_SH" "$@" up "$dir" >"$dir.up.log" 2>&1 || { cat "$dir.up.log" >&2; return 1; }
  # shellcheck disable=SC1090,SC1091
  . "$dir/env"
  STORE_DIR=$dir
  STORE_ADMIN=$KVC_STORE_ADMIN
  STORE_RPC=$KVC_STORE_RPC
}

kvc_external_backend() {
  kvc_register_cluster_object "kvcachebackend/$1"
  kubectl apply -f - >/dev/null <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata: {name: $1, labels: $KVC_LABELS}
spec:
  connection:
    external:
      endpoints:
      - {name: Client, address: "$STORE_RPC"}
      - {name: Admin, address: "$STORE_ADMIN"}
YAML
}

kvc_pool() {
  kvc_register_cluster_object "kvcachepool/$1"
  kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: $1, labels: $KVC_LABELS}
spec:
  backends: [$2]
  quota: {total: $3}
YAML
}

# kvc_binding NS NAME POOL CEILING [DOMAIN] [BLOCK] [DTYPE] [LABELS]
kvc_binding() {
  local domain_name=""
  [ -n "${5:-}" ] && domain_name="name: $5, "
  kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: $2, namespace: $1, labels: ${8:-$KVC_LABELS}}
spec:
  poolRef: {name: $3}
  quota: {ceiling: $4}
  domain: {${domain_name}blockSize: ${6:-64}, dtype: ${7:-bfloat16}}
YAML
}

_kvc_get() {  # KIND [NS/]NAME
  local kind=$1 ref=$2
  if [[ $ref == */* ]]; then
    kubectl -n "${ref%%/*}" get "$kind" "${ref#*/}" -o json 2>/dev/null
  else
    kubectl get "$kind" "$ref" -o json 2>/dev/null
  fi
}

kvc_jq() { _kvc_get "$1" "$2" | jq -r "$3" 2>/dev/null; }

kvc_cond() {
  kvc_jq "$1" "$2" ".status.conditions[]? | select(.type == \"$3\") | \"\(.status)/\(.reason)\""
}

# kvc_cond_is KIND REF TYPE STATUS/REASON (for kvc_wait_for)
kvc_cond_is() { [ "$(kvc_cond "$1" "$2" "$3")" = "$4" ]; }
kvc_phase_is() { [ "$(kvc_jq "$1" "$2" '.status.phase')" = "$3" ]; }
kvc_gone() { [ -z "$(_kvc_get "$1" "$2")" ]; }

# The ledger of the store started last: "tenant=requested/effective" sorted, space-separated.
kvc_ledger() {
  local json
  json=$("$KVCACHE" store status --admin "$STORE_ADMIN" -o json 2>/dev/null)
  if [ -z "$json" ] || [ "$(jq -r '.ledger.tenants | type' <<<"$json" 2>/dev/null)" != array ]; then
    echo "<ledger unreadable>"
    return
  fi
  jq -r '[.ledger.tenants[]? | select(.explicitPolicy) | "\(.tenantId)=\(.requestedBytes)/\(.effectiveBytes)"] | sort | join(" ")' <<<"$json"
}
kvc_ledger_is() { [ "$(kvc_ledger)" = "$1" ]; }

# kvc_write TENANT KEY [BYTES]: put() one object with the wheel's Python client; prints its code.
kvc_write() {
  "$KVC_STORE_PYTHON" "$KVC_REPO_DIR/test/store/tests/writer.py" --master "$STORE_RPC" \
    --tenant "$1" --key "$2" --bytes "${3:-1048576}" 2>/dev/null | sed -n 's/^put=//p' | tail -n 1
}
