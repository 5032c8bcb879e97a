#!/usr/bin/env bash
# The managed master's admin API answers only the operator, tried from the attacker's side: from
# an unprivileged Pod in another namespace on a real node, through the leader Service and the Pod
# network, as any workload of the cluster could were it not for the store's NetworkPolicies (which
# this test opens to the attacker's namespace, to try what stands behind them).
#   - the master's own HTTP listener is bound to the leader Pod's loopback: the Pod's IP does not
#     answer on it;
#   - :9003 (`kvcache store leader`'s front) speaks only mutual TLS: plain HTTP, TLS without a
#     client certificate and TLS with a certificate of another CA (naming itself the operator) are
#     refused at the handshake; the scraper's certificate (kvcache-store-metrics-client) reads
#     GET /metrics and nothing else (403 on the ledger, on remove_all, on the segment listing); the
#     operator's certificate may call every route; refusals are in the leader's log, naming who;
#   - `kvcache store status` reads the store with the operator's Secret;
#   - rotation: the serving and operator Secrets deleted are issued anew and taken by the leader
#     without a restart of the master; a CA deleted re-issues every leaf, after which the old
#     scraper certificate is refused and the new one is not.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
b=store-admin
sys=$KVC_SYSTEM_NAMESPACE
kvcache=${KVC_KVCACHE_BIN:-$(dirname "$0")/../../../build/src/cmd/kvcache}
trap '[ -n "${ns:-}" ] && unadmit_namespace $b "$ns"; delete_backend $b; kvc_cleanup' EXIT

kvc_assert_ok "a managed backend is created" managed_backend $b 128Mi
kvc_wait_for 240 "it is Ready" kvcb_phase_is $b Ready
leader=$(store_pods $b leader)
leader_ip=$(kubectl -n "$sys" get pod "$leader" -o jsonpath='{.status.podIP}')
service=$b-leader.$sys.svc

# The attacker's certificates: one of a CA of its own, naming itself the operator.
certs=$KVC_CLEANUP_FILE.d/foreign
mkdir -p "$certs"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=foreign-ca \
  -keyout "$certs/ca.key" -out "$certs/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -subj "/O=kvcache:operator/CN=kvcache-operator" -keyout "$certs/tls.key" -out "$certs/tls.csr" 2>/dev/null
openssl x509 -req -in "$certs/tls.csr" -CA "$certs/ca.crt" -CAkey "$certs/ca.key" -CAcreateserial \
  -days 1 -out "$certs/tls.crt" 2>/dev/null

ns=$(kvc_real_nodes_namespace attacker)
# The store's NetworkPolicies keep this namespace away from every port (network_policy.sh): the
# test admits it, as a careless administrator might, to try the second wall, mutual TLS.
kvc_assert_ok "the attacker's namespace is admitted to the store's Pods (a NetworkPolicy)" admit_namespace $b "$ns"
metrics_dir=$(admin_tls_dir kvcache-store-metrics-client)
kubectl -n "$ns" create secret generic foreign --from-file="$certs/tls.crt" \
  --from-file="$certs/tls.key" >/dev/null
kubectl -n "$ns" create secret generic scraper --from-file="$metrics_dir/tls.crt" \
  --from-file="$metrics_dir/tls.key" >/dev/null
kvc_assert_ok "an unprivileged Pod runs in namespace $ns on a real node" kubectl -n "$ns" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: attacker}
spec:
  nodeSelector: {type: real}
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 65534, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: attacker
    image: $(kubectl -n "$sys" get configmap gpustack-settings -o jsonpath='{.data.kv-cache-backend-image}')
    imagePullPolicy: Never
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    command: [python3, -c, "import time; time.sleep(3600)"]
    volumeMounts:
    - {name: foreign, mountPath: /certs/foreign}
    - {name: scraper, mountPath: /certs/scraper}
  volumes:
  - {name: foreign, secret: {secretName: foreign}}
  - {name: scraper, secret: {secretName: scraper}}
YAML
kvc_wait_for 90 "the attacker runs" bash -c \
  "[ \"\$(kubectl -n $ns get pod attacker -o jsonpath='{.status.phase}')\" = Running ]"

# attack HOST PORT METHOD PATH [CERT-DIR|plain]: one request from the attacker Pod; prints
# "HTTP <status>", "refused: <why>" (the connection was taken, the request was not answered) or
# "unreachable: <why>" (no connection).
attack() {
  kubectl -n "$ns" exec attacker -- python3 -c '
import http.client, socket, ssl, sys
host, port, method, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
mode = sys.argv[5] if len(sys.argv) > 5 else "none"
try:
    sock = socket.create_connection((host, port), timeout=5)
except OSError as e:
    print("unreachable:", e.__class__.__name__); sys.exit()
try:
    if mode == "plain":
        conn = http.client.HTTPConnection(host, port, timeout=5)
    else:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # the attacker trusts anything
        if mode != "none":
            ctx.load_cert_chain(mode + "/tls.crt", mode + "/tls.key")
        conn = http.client.HTTPSConnection(host, port, timeout=5, context=ctx)
    conn.sock = sock if mode == "plain" else conn._context.wrap_socket(sock, server_hostname=host)
    conn.request(method, path, body=b"{}" if method in ("PUT", "POST") else None)
    print("HTTP", conn.getresponse().status)
except Exception as e:
    print("refused:", e.__class__.__name__)
' "$@"
}

kvc_assert_contains "the master's own listener (:9013) is not on the Pod's IP" "unreachable" \
  "$(attack "$leader_ip" 9013 GET /metrics plain)"
kvc_assert_contains "plain HTTP to the leader Service's admin port is refused" "refused" \
  "$(attack "$service" 9003 PUT /api/v1/tenant_quotas plain)"
kvc_assert_contains "TLS without a client certificate is refused" "refused" \
  "$(attack "$service" 9003 PUT /api/v1/tenant_quotas)"
kvc_assert_contains "TLS with a certificate of another CA naming itself the operator is refused" "refused" \
  "$(attack "$service" 9003 POST '/api/v1/remove_all?force=true&tenant_id=team-a' /certs/foreign)"
kvc_assert_contains "the same on the leader Pod's IP" "refused" \
  "$(attack "$leader_ip" 9003 DELETE /api/v1/tenant_quotas /certs/foreign)"
kvc_assert_eq "the scraper's certificate reads GET /metrics" "HTTP 200" \
  "$(attack "$service" 9003 GET /metrics /certs/scraper)"
kvc_assert_eq "and may not write the ledger (PUT /api/v1/tenant_quotas)" "HTTP 403" \
  "$(attack "$service" 9003 PUT /api/v1/tenant_quotas /certs/scraper)"
kvc_assert_eq "nor remove a tenant's blocks (POST /api/v1/remove_all)" "HTTP 403" \
  "$(attack "$service" 9003 POST '/api/v1/remove_all?force=true&tenant_id=team-a' /certs/scraper)"
kvc_assert_eq "nor list the segments" "HTTP 403" \
  "$(attack "$service" 9003 GET /get_segments_detail /certs/scraper)"
kvc_assert_ok "the operator's certificate reads the ledger" admin_curl $b /api/v1/tenant_quotas -o /dev/null
logs=$(kubectl -n "$sys" logs "$leader" -c leader)
kvc_assert_contains "the leader logged the scraper's refusal, naming it and the route" \
  "kvcache-store-metrics" "$(grep -i "refus" <<<"$logs" | grep PUT)"
attacker_ip=$(kubectl -n "$ns" get pod attacker -o jsonpath='{.status.podIP}')
kvc_assert_contains "and a refused handshake, naming the attacker's address" "refused $attacker_ip:" \
  "$(grep handshake_refused <<<"$logs")"
kvc_assert_contains "kvcache store status reads the store with the operator's Secret" "TENANT LEDGER" \
  "$("$kvcache" store status --admin "$service:9003" --connect-to "$(leader_admin $b)" \
     --tls-secret "$sys/kvcache-store-operator-client" 2>&1)"

# master_identity: the master process's pid and start time inside the leader Pod.
master_identity() {
  kubectl -n "$sys" exec "$leader" -c leader -- python3 -c '
import os
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    if any(os.path.basename(a.decode(errors="replace")) == "mooncake_master" for a in argv[:2]):
        print(pid, open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[19])'
}
restarts() { kubectl -n "$sys" get pod "$leader" -o jsonpath='{range .status.containerStatuses[*]}{.restartCount}{end}'; }
# serial SECRET: the serial of the Secret's tls.crt; served_serial: the one :9003 presents.
serial() {
  kubectl -n "$sys" get secret "$1" -o jsonpath='{.data.tls\.crt}' 2>/dev/null | base64 -d |
    openssl x509 -noout -serial 2>/dev/null
}
served_serial() {
  openssl s_client -connect "$(leader_admin $b)" -servername "$service" </dev/null 2>/dev/null |
    openssl x509 -noout -serial 2>/dev/null
}
export -f serial served_serial leader_admin attack
export b sys service ns

master_before=$(master_identity)
restarts_before=$(restarts)
serving_before=$(serial kvcache-store-admin-tls)
client_before=$(serial kvcache-store-operator-client)
kvc_assert_eq "the leader serves the Secret's certificate" "$serving_before" "$(served_serial)"
kubectl -n "$sys" delete secret kvcache-store-admin-tls kvcache-store-operator-client >/dev/null
kvc_wait_for 150 "the operator issues both anew" bash -c \
  "s=\$(serial kvcache-store-admin-tls); c=\$(serial kvcache-store-operator-client);
   [ -n \"\$s\" ] && [ \"\$s\" != '$serving_before' ] && [ -n \"\$c\" ] && [ \"\$c\" != '$client_before' ]"
kvc_wait_for 180 "the leader serves the new certificate (the kubelet updated its volume)" bash -c \
  "[ \"\$(served_serial)\" = \"\$(serial kvcache-store-admin-tls)\" ]"
rm -rf "$KVC_CLEANUP_FILE.d/admin-tls-kvcache-store-operator-client"
kvc_assert_ok "the new operator certificate reads the ledger" admin_curl $b /api/v1/tenant_quotas -o /dev/null
kvc_assert_eq "the master was not restarted (same process)" "$master_before" "$(master_identity)"
kvc_assert_eq "no container of the leader Pod restarted" "$restarts_before" "$(restarts)"
kvc_assert_eq "the old scraper certificate still reads /metrics (same CA)" "HTTP 200" \
  "$(attack "$service" 9003 GET /metrics /certs/scraper)"

kubectl -n "$sys" delete secret kvcache-store-ca >/dev/null
kvc_wait_for 150 "a new CA re-issues the leaves" bash -c \
  "[ -n \"\$(serial kvcache-store-metrics-client)\" ] &&
   [ \"\$(serial kvcache-store-metrics-client)\" != \"\$(openssl x509 -noout -serial -in $metrics_dir/tls.crt)\" ]"
kvc_wait_for 180 "the leader serves the leaf of the new CA" bash -c \
  "[ \"\$(served_serial)\" = \"\$(serial kvcache-store-admin-tls)\" ]"
kvc_wait_for 60 "the old scraper certificate is refused at the handshake" bash -c \
  "attack $service 9003 GET /metrics /certs/scraper | grep -q refused"
rm -rf "$KVC_CLEANUP_FILE.d"/admin-tls-*
kvc_wait_for 60 "the new scraper certificate reads /metrics" bash -c \
  "ADMIN_SECRET=kvcache-store-metrics-client admin_curl $b /metrics -o /dev/null"
kvc_wait_for 60 "the new operator certificate reads the ledger" admin_curl $b /api/v1/tenant_quotas -o /dev/null
kvc_assert_eq "the master was not restarted" "$master_before" "$(master_identity)"
kvc_assert_eq "no container of the leader Pod restarted" "$restarts_before" "$(restarts)"
kvc_wait_for 60 "the backend is Ready" kvcb_phase_is $b Ready
kvc_done
