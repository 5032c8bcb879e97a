#!/usr/bin/env bash
# An external backend whose admin endpoint the administrator protects with mutual TLS, and which
# names the operator's credential (annotation kvcache.gpustack.ai/admin-tls-secret):
#   - a real store outside the cluster (on the bridge address), its admin API fronted by
#     `kvcache store leader --admin-address` with a CA of the administrator's own, the only way
#     to it from the Pods;
#   - a backend naming no credential cannot read it (refused at the handshake): not Ready, and
#     its status says why;
#   - naming a Secret the operator may not read: the status names the Secret and the grant;
#   - once the administrator grants `get` on that one Secret, the in-cluster operator presents its
#     client certificate: the backend is Ready with the store's capacity, and a pool's Binding
#     is granted in the master's ledger (read back through the front).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
root=$(cd "$(dirname "$0")/../../.." && pwd)
kvcache=${KVC_KVCACHE_BIN:-$root/build/src/cmd/kvcache}
sys=$KVC_SYSTEM_NAMESPACE
b=guarded-external
work=$KVC_CLEANUP_FILE.d/external
mkdir -p "$work/front" "$work/operator"
store=$work/store
# The Binding's release goes through the front (its domain leaves the ledger): the front and
# the grant stay until the backend is gone.
cleanup_external() {
  kubectl -n "${ns:-default}" delete kvcpb --all --timeout=60s >/dev/null 2>&1
  kubectl delete kvcp guarded-pool --ignore-not-found --timeout=60s >/dev/null 2>&1
  delete_backend $b
  kubectl -n "$sys" delete secret,role,rolebinding $b-admin-tls --ignore-not-found >/dev/null 2>&1
  [ -n "${front_pid:-}" ] && kill "$front_pid" 2>/dev/null
  "$root/test/store/store.sh" down "$store" >/dev/null 2>&1
}
trap 'cleanup_external; kvc_cleanup' EXIT

kvc_log "a real store outside the cluster, its own admin listener on the host's loopback"
KVC_STORE_MEMBERS=1 "$root/test/store/store.sh" up "$store" >"$work/store.log" 2>&1 \
  || { tail -20 "$work/store.log"; echo "FAIL: store.sh up"; exit 1; }
# shellcheck disable=SC1091
. "$store/env"

# The administrator's CA, the front's certificate (the bridge address) and the operator's client
# certificate (group kvcache:operator: every route).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=admin-ca \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
leaf() { # leaf DIR SUBJECT [SAN]
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$2" \
    -keyout "$1/tls.key" -out "$1/tls.csr" 2>/dev/null
  openssl x509 -req -in "$1/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial \
    -days 1 -out "$1/tls.crt" ${3:+-extfile <(printf 'subjectAltName=%s\n' "$3")} 2>/dev/null
  cp "$work/ca.crt" "$1/ca.crt"
}
leaf "$work/front" /CN=external-admin "IP:$KVC_HOST_ADDRESS"
leaf "$work/operator" "/O=kvcache:operator/CN=kvcache-operator"
port=$(kvc_free_port)
setsid "$kvcache" store leader --health-address=0 \
  --admin-address="$KVC_HOST_ADDRESS:$port" --admin-tls-dir="$work/front" \
  --admin-upstream="$KVC_STORE_ADMIN" -- sleep 3600 >"$work/front.log" 2>&1 &
front_pid=$!
admin=$KVC_HOST_ADDRESS:$port
kvc_wait_for 30 "the mutual-TLS front serves $admin" curl -sf --cacert "$work/ca.crt" \
  --cert "$work/operator/tls.crt" --key "$work/operator/tls.key" "https://$admin/health" -o /dev/null
kvc_assert_eq "plain HTTP to the front is refused" "000" \
  "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$admin/health")"

backend() { # backend [SECRET]
  kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCacheBackend
metadata:
  name: $b
  annotations: {${1:+kvcache.gpustack.ai/admin-tls-secret: $1}}
spec:
  connection:
    external:
      endpoints:
        - {name: Client, address: "$KVC_STORE_RPC"}
        - {name: Admin, address: "$admin"}
YAML
}
message() { kvcb_field $b '{.status.conditions[?(@.type=="LeaderAvailable")].message}'; }
unread() { [ -n "$(message)" ] && ! kvcb_phase_is $b Ready; }
names_the_grant() {
  message | grep -q 'grant the operator get on it' && message | grep -q "$sys/$b-admin-tls" &&
    message | grep -q "GET https://$admin/health"
}

kvc_assert_ok "an external backend naming no credential" backend
kvc_wait_for 60 "is not Ready, and says the admin endpoint could not be read" unread
kvc_log "LeaderAvailable: $(message)"

kubectl -n "$sys" create secret generic $b-admin-tls --from-file="$work/operator/tls.crt" \
  --from-file="$work/operator/tls.key" --from-file="$work/operator/ca.crt" >/dev/null
kvc_assert_ok "it names the Secret $b-admin-tls" backend $b-admin-tls
kvc_wait_for 60 "which the operator may not read: the status names the Secret and the grant" names_the_grant
kvc_log "LeaderAvailable: $(message)"

kvc_assert_ok "the administrator grants get on that one Secret" bash -c "
  kubectl -n $sys create role $b-admin-tls --verb=get --resource=secrets --resource-name=$b-admin-tls >/dev/null &&
  kubectl -n $sys create rolebinding $b-admin-tls --role=$b-admin-tls --serviceaccount=$sys:kvcache-operator >/dev/null"
kvc_assert_eq "and no other" "no" \
  "$(kubectl auth can-i --as=system:serviceaccount:$sys:kvcache-operator get secrets/another-secret -n "$sys")"
kvc_wait_for 120 "the backend is Ready: the operator presented the Secret's certificate" kvcb_phase_is $b Ready
kvc_assert_eq "with the store's capacity" "256Mi" "$(kvcb_field $b '{.status.capacity.total}')"

ns=$(kvc_fresh_namespace guarded)
kvc_assert_ok "a pool and a Binding on it" kubectl apply -f - <<YAML
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: guarded-pool}
spec: {backends: [$b], quota: {total: 256Mi}}
---
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: team, namespace: $ns}
spec:
  poolRef: {name: guarded-pool}
  quota: {ceiling: 128Mi}
  domain: {name: guarded-team, blockSize: 64, dtype: bfloat16}
YAML
kvc_wait_for 120 "the Binding's quota is granted" bash -c \
  "[ \"\$(kubectl -n $ns get kvcpb team -o jsonpath='{.status.conditions[?(@.type==\"QuotaGranted\")].status}')\" = True ]"
kvc_assert_contains "the master's ledger holds the domain, read through the front" "guarded-team" \
  "$(curl -sf --cacert "$work/ca.crt" --cert "$work/operator/tls.crt" --key "$work/operator/tls.key" \
     "https://$admin/api/v1/tenant_quotas")"
kvc_done
