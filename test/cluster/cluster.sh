#!/usr/bin/env bash
# A real Kubernetes cluster on this machine for tests and the local demo:
#   etcd, kube-apiserver (secure port, openssl PKI), kube-controller-manager, kube-scheduler,
#   real nodes (per node a containerd and a kubelet; one kube-proxy; one kube-router enforcing
#   NetworkPolicy; CoreDNS; nodes.sh),
#   kwok (fake Nodes whose Pods turn Running/Ready and whose deletions complete) + N fake Nodes.
# Binaries come from build.sh (built from Go modules into a cache outside the repository), the
# pause and CoreDNS images from images/build.sh.
#
# usage: cluster.sh up|down|env|status|load|netpol-down|netpol-up [DIR] [ARCHIVE...]
#   up      start a cluster in DIR (reuses it when every process is alive and /readyz answers)
#   down    stop every process of DIR by its saved pid and restore every host setting the real
#           nodes changed (idempotent); --purge also removes the files up created
#   env     print the shell-sourceable environment of DIR (same as `cat DIR/env`)
#   status  print each process, /readyz and the nodes; exit 0 only when the cluster is healthy
#   load    import image archives (images/build.sh) into every real node's containerd
#   netpol-down|netpol-up  stop or start the NetworkPolicy enforcement (kube-router) of a running
#           cluster: a test shows what an attacker reaches without it
# DIR defaults to $KVC_CLUSTER_DIR, else ${KVC_CACHE_DIR:-~/.cache/kvcache-operator}/cluster.
#
# Environment knobs: KVC_REAL_NODES (real nodes, default 2; 0 = fake nodes only, on 127.0.0.1,
# any number of clusters side by side), KVC_NETPOL=0 (real nodes without NetworkPolicy
# enforcement), KVC_NODES (fake nodes, default 2), KVC_READY_TIMEOUT
# (seconds to wait for /readyz, default 120), KVC_NO_BUILD=1 (fail instead of building).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=paths.sh
. "$HERE/paths.sh"
# shellcheck source=nodes.sh
. "$HERE/nodes.sh"
ROOT=$(cd "$HERE/../.." && pwd)

CONTROL_PLANE=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
MARKER=.kvc-cluster
# The fake (kwok) nodes' Pod IPs: routed to unreachable while the cluster runs (cmd_up).
KWOK_POD_CIDR=10.244.0.0/16

log() { printf '[cluster %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

bin_of() {
  case $1 in
    etcd) echo "$KVC_ETCD_BIN/etcd" ;;
    kwok) echo "$KVC_KWOK_BIN/kwok" ;;
    kube-router) echo "$KVC_KUBE_ROUTER_BIN/kube-router" ;;
    *) echo "$KVC_K8S_BIN/$1" ;;
  esac
}

# The processes of this cluster: the control plane, and per real node a containerd and a kubelet.
components() {
  local i n; n=$(nodes_of_dir)
  echo "${CONTROL_PLANE[@]}"
  for (( i=0; i<n; i++ )); do echo "containerd-$i kubelet-$i"; done
  (( n > 0 )) && echo kube-proxy
  (( n > 0 )) && netpol_of_dir && echo kube-router
  return 0
}

# The number of real nodes DIR was started with (its record wins over today's KVC_REAL_NODES, so
# that `down` and `status` see what `up` made).
nodes_of_dir() {
  if [ -s "$D/ports.env" ] && grep -q '^KVC_REAL_NODES=' "$D/ports.env"; then
    sed -n 's/^KVC_REAL_NODES=//p' "$D/ports.env"
  else real_nodes; fi
}

# pid_alive NAME [EXE]: the pid saved for NAME runs the binary EXE (default: NAME without a -<n>
# suffix), which guards against pid reuse.
pid_alive() {
  local f="$D/$1.pid" pid exe want=${2:-}
  [ -n "$want" ] || { want=$1; [[ $want =~ ^(.*)-[0-9]+$ ]] && want=${BASH_REMATCH[1]}; }
  [ -s "$f" ] || return 1
  pid=$(cat "$f")
  [ -d "/proc/$pid" ] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  [ "$(basename "${exe% (deleted)}")" = "$want" ]
}

readyz() {
  [ -s "$D/ports.env" ] || return 1
  # shellcheck disable=SC1091
  . "$D/ports.env"
  [ "$(curl -s --max-time 5 --cacert "$D/pki/ca.crt" "https://${KVC_APISERVER_HOST:-127.0.0.1}:$KVC_APISERVER_PORT/readyz" 2>/dev/null)" = ok ]
}

all_alive() {
  local c; for c in $(components); do pid_alive "$c" || return 1; done
}

port_free() {
  local p=$1
  if command -v ss >/dev/null 2>&1; then
    [ -z "$(ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null)" ]
  else
    ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null
  fi
}

# pick_ports N: N distinct free TCP ports on 127.0.0.1 (these flags cannot bind port 0), in
# 20000..29999 for the reasons kvc_free_port (lib.sh) gives.
PICKED=()
pick_ports() {
  local n=$1 p tries=0
  PICKED=()
  while [ ${#PICKED[@]} -lt "$n" ]; do
    tries=$((tries + 1)); [ $tries -lt 1000 ] || die "no free ports found"
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 10000))
    [[ " ${PICKED[*]} " == *" $p "* ]] && continue
    port_free "$p" && PICKED+=("$p")
  done
}

# start NAME ARGS...: start a daemon in its own session, stdio to DIR/NAME.log, pid to DIR/NAME.pid.
start() {
  local name=$1; shift
  local exe; exe=$(bin_of "$name")
  log "starting $name"
  setsid "$exe" "$@" </dev/null >>"$D/$name.log" 2>&1 &
  echo $! >"$D/$name.pid"
}

wait_for() { # wait_for SECONDS DESCRIPTION CMD...
  local secs=$1 what=$2; shift 2
  local t0=$SECONDS
  until "$@" >/dev/null 2>&1; do
    if (( SECONDS - t0 >= secs )); then return 1; fi
    sleep 1
  done
  log "$what after $((SECONDS - t0))s"
}

need() { command -v "$1" >/dev/null 2>&1 || die "'$1' is missing (apt-get install $2)"; }

gen_pki() {
  local P=$D/pki
  mkdir -p "$P"
  log "generating PKI (openssl) in $P"
  (
    cd "$P"
    openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj /CN=kvcache-test-ca \
      -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver \
      -keyout apiserver.key -out apiserver.csr 2>/dev/null
    printf '%s\n' \
      "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,IP:$NODE_GATEWAY,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
      'extendedKeyUsage=serverAuth' 'keyUsage=critical,digitalSignature,keyEncipherment' >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 \
      -out apiserver.crt -extfile apiserver.ext 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=kvcache-admin" \
      -keyout admin.key -out admin.csr 2>/dev/null
    printf '%s\n' 'extendedKeyUsage=clientAuth' 'keyUsage=critical,digitalSignature,keyEncipherment' >admin.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 \
      -out admin.crt -extfile admin.ext 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f ./*.csr ./*.ext
    chmod 600 ./*.key
  )
}

write_kubeconfig() {
  cat >"$D/admin.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kvcache-test
  cluster:
    server: $APISERVER_URL
    certificate-authority: $D/pki/ca.crt
users:
- name: kvcache-admin
  user:
    client-certificate: $D/pki/admin.crt
    client-key: $D/pki/admin.key
contexts:
- name: kvcache-test
  context:
    cluster: kvcache-test
    user: kvcache-admin
    namespace: default
current-context: kvcache-test
EOF
  chmod 600 "$D/admin.kubeconfig"
}

write_env() {
  cat >"$D/env" <<EOF
# Environment of the test control plane in $D (source it: . $D/env)
export KVC_CLUSTER_DIR='$D'
export KUBECONFIG='$D/admin.kubeconfig'
export KVC_APISERVER_URL='$APISERVER_URL'
export KVC_APISERVER_PORT='$KVC_APISERVER_PORT'
export KVC_APISERVER_HOST='$APISERVER_HOST'
export KVC_ETCD_URL='http://127.0.0.1:$KVC_ETCD_PORT'
export KVC_CA_FILE='$D/pki/ca.crt'
export KVC_CA_CERT='$D/pki/ca.crt'
export KVC_CA_KEY='$D/pki/ca.key'
export KVC_ADMIN_CERT='$D/pki/admin.crt'
export KVC_ADMIN_KEY='$D/pki/admin.key'
export KVC_K8S_BIN='$KVC_K8S_BIN'
export KVC_ETCD_BIN='$KVC_ETCD_BIN'
export KVC_KWOK_BIN='$KVC_KWOK_BIN'
export KVC_K8S_VERSION='$KVC_K8S_VERSION'
export KVC_NODE_NAMES='$NODE_NAMES'
export KVC_REAL_NODE_NAMES='$REAL_NODE_NAMES'
# The host's address on the Pods' bridge: where a Pod reaches a process on the host ("" without
# real nodes). A store run outside the cluster for Pods to use listens here.
export KVC_HOST_ADDRESS='$HOST_ADDRESS'
export KVC_CONTAINERD_SOCKETS='$CONTAINERD_SOCKETS'
export KVC_CRICTL_BIN='$KVC_CRICTL_BIN'
export KVC_HELM_BIN='$KVC_HELM_BIN'
case ":\$PATH:" in *":$KVC_K8S_BIN:"*) ;; *) export PATH='$KVC_K8S_BIN:$KVC_ETCD_BIN:$KVC_KWOK_BIN':"\$PATH" ;; esac
EOF
}

node_manifest() {
  local name=$1 extra=$2
  cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: $name
    type: kwok
$extra
spec: {}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", ephemeral-storage: 500Gi, nvidia.com/gpu: "8"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110", ephemeral-storage: 500Gi, nvidia.com/gpu: "8"}
  nodeInfo:
    architecture: amd64
    operatingSystem: linux
    kubeletVersion: fake
EOF
}

# stop NAME...: TERM every named process that is still ours, wait up to 20 s, then KILL.
stop_group() {
  local c pid pids=() t
  for c in "$@"; do
    if pid_alive "$c"; then
      pid=$(cat "$D/$c.pid"); pids+=("$pid")
      log "stopping $c (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
    fi
  done
  for (( t=0; t<200; t++ )); do
    local alive=0
    for pid in "${pids[@]}"; do [ -d "/proc/$pid" ] && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    if [ -d "/proc/$pid" ]; then log "pid $pid did not stop in 20s, killing it"; kill -KILL "$pid" 2>/dev/null || true; fi
  done
  for c in "$@"; do rm -f "$D/$c.pid"; done
}

stop_all() {
  local n i nodes=() cds=()
  n=$(nodes_of_dir)
  for (( i=0; i<n; i++ )); do nodes+=("kubelet-$i"); cds+=("containerd-$i"); done
  # Pods of the real nodes first (through the CRI, so the CNI undoes their network), then the
  # clients, then the apiserver and its storage; the host settings last.
  (( n > 0 )) && remove_node_pods
  stop_group kwok kube-scheduler kube-controller-manager kube-proxy kube-router "${nodes[@]}"
  (( n > 0 )) && stop_group "${cds[@]}"
  (( n > 0 )) && clean_node_leftovers
  stop_group kube-apiserver
  stop_group etcd
  restore_host_state
  if [ "$(id -u)" = 0 ]; then ip route del unreachable "$KWOK_POD_CIDR" 2>/dev/null || true; fi
}

cmd_up() {
  need openssl openssl; need curl curl; need setsid util-linux
  if [ -e "$D" ] && [ ! -e "$D/$MARKER" ] && [ -n "$(ls -A "$D" 2>/dev/null)" ]; then
    die "$D exists, is not empty and was not created by cluster.sh; choose another DIR"
  fi
  mkdir -p "$D"; touch "$D/$MARKER"
  if all_alive && readyz; then
    log "cluster in $D is already running (reused): $(cat "$D/ports.env" | tr '\n' ' ')"
    return 0
  fi
  # Anything half-alive from an earlier run is stopped by pid first (and its host state restored).
  stop_all
  local n; n=$(real_nodes)
  [[ $n =~ ^[0-9]$ ]] || die "KVC_REAL_NODES must be a number from 0 to 9, not '$n'"
  if ! "$HERE/build.sh" --check >/dev/null 2>&1; then
    [ "${KVC_NO_BUILD:-0}" = 1 ] && die "control-plane binaries missing and KVC_NO_BUILD=1 (run $HERE/build.sh)"
    log "control-plane binaries missing: building them now (takes ~15-25 min on 2 cores the first time)"
    "$HERE/build.sh"
  fi
  local T0=$SECONDS c
  rm -rf "$D/etcd-data" "$D/pki" "$D/kcm-certs" "$D/apiserver-certs" "$D/scheduler-certs" \
    "$D"/node-* "$D/cni"
  for c in $(components); do
    [ -f "$D/$c.log" ] && mv -f "$D/$c.log" "$D/$c.log.prev"
  done
  APISERVER_HOST=127.0.0.1 HOST_ADDRESS="" REAL_NODE_NAMES="" CONTAINERD_SOCKETS=""
  if (( n > 0 )); then
    nodes_preflight
    log "images of the nodes (pause, CoreDNS)"
    "$ROOT/images/build.sh" pause coredns >/dev/null || die "could not build the pause and CoreDNS images"
    # shellcheck disable=SC1090
    . "$IMAGES_ENV_PAUSE"; . "$IMAGES_ENV_COREDNS"
    PAUSE_IMAGE=docker.io/$KVC_IMAGE_PAUSE COREDNS_IMAGE=$KVC_IMAGE_COREDNS
    record_host_state
    net_up
    APISERVER_HOST=$NODE_GATEWAY HOST_ADDRESS=$NODE_GATEWAY
  fi
  APISERVER_URL=""   # set once the port is known
  gen_pki

  # Ports: picked under a lock, and held until etcd and the apiserver have bound them, so that
  # clusters started side by side cannot pick the same ones.
  mkdir -p "$KVC_CACHE_DIR"
  exec 8>"$KVC_CACHE_DIR/.ports.lock"
  flock 8
  pick_ports 4
  KVC_ETCD_PORT=${PICKED[0]}; KVC_ETCD_PEER_PORT=${PICKED[1]}
  KVC_APISERVER_PORT=${PICKED[2]}; KVC_SCHEDULER_PORT=${PICKED[3]}
  local netpol=0; (( n > 0 )) && [ "${KVC_NETPOL:-1}" != 0 ] && netpol=1
  printf 'KVC_ETCD_PORT=%s\nKVC_ETCD_PEER_PORT=%s\nKVC_APISERVER_PORT=%s\nKVC_SCHEDULER_PORT=%s\nKVC_APISERVER_HOST=%s\nKVC_REAL_NODES=%s\nKVC_NETPOL=%s\n' \
    "$KVC_ETCD_PORT" "$KVC_ETCD_PEER_PORT" "$KVC_APISERVER_PORT" "$KVC_SCHEDULER_PORT" "$APISERVER_HOST" "$n" "$netpol" >"$D/ports.env"
  APISERVER_URL=https://$APISERVER_HOST:$KVC_APISERVER_PORT
  log "ports: etcd $KVC_ETCD_PORT/$KVC_ETCD_PEER_PORT, apiserver $KVC_APISERVER_PORT, scheduler $KVC_SCHEDULER_PORT"

  start etcd --name kvc0 --data-dir "$D/etcd-data" --unsafe-no-fsync --log-level warn \
    --listen-client-urls "http://127.0.0.1:$KVC_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$KVC_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$KVC_ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$KVC_ETCD_PEER_PORT" \
    --initial-cluster "kvc0=http://127.0.0.1:$KVC_ETCD_PEER_PORT"
  wait_for 60 "etcd healthy" curl -sf --max-time 2 "http://127.0.0.1:$KVC_ETCD_PORT/health" \
    || { tail -20 "$D/etcd.log" >&2; die "etcd did not become healthy (log: $D/etcd.log)"; }

  local P=$D/pki node_flags=(--endpoint-reconciler-type=none)
  if (( n > 0 )); then
    # Pods reach the API server on the bridge (kubernetes.default -> 10.96.0.1 -> here, kept by
    # the endpoint reconciler); it reaches the kubelets with its own client certificate; a Pod
    # lands on a fake node unless its namespace says otherwise (PodNodeSelector, nodes.sh).
    nodes_pki
    node_admission_config
    node_flags=(--kubelet-client-certificate="$P/kubelet-client.crt" --kubelet-client-key="$P/kubelet-client.key"
                --kubelet-certificate-authority= --kubelet-preferred-address-types=InternalIP
                --enable-admission-plugins=PodNodeSelector --admission-control-config-file="$D/admission.yaml")
  fi
  start kube-apiserver --etcd-servers="http://127.0.0.1:$KVC_ETCD_PORT" \
    --bind-address="$APISERVER_HOST" --advertise-address="$APISERVER_HOST" --secure-port="$KVC_APISERVER_PORT" \
    --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --authorization-mode=Node,RBAC --allow-privileged=true \
    "${node_flags[@]}" --cert-dir="$D/apiserver-certs" --profiling=false
  local rt=${KVC_READY_TIMEOUT:-120}
  if ! wait_for "$rt" "kube-apiserver /readyz ok" readyz; then
    tail -30 "$D/kube-apiserver.log" >&2
    stop_all
    die "kube-apiserver did not answer /readyz within ${rt}s (log: $D/kube-apiserver.log)"
  fi
  flock -u 8; exec 8>&-
  write_kubeconfig

  start kube-controller-manager --kubeconfig="$D/admin.kubeconfig" --leader-elect=false \
    --root-ca-file="$P/ca.crt" --service-account-private-key-file="$P/sa.key" \
    --bind-address=127.0.0.1 --secure-port=0 --cert-dir="$D/kcm-certs" \
    --node-monitor-grace-period=2m --profiling=false
  start kube-scheduler --kubeconfig="$D/admin.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 \
    --secure-port="$KVC_SCHEDULER_PORT" --cert-dir="$D/scheduler-certs" \
    --authorization-always-allow-paths=/healthz,/readyz,/livez --profiling=false
  [ -s "$KVC_KWOK_STAGES" ] || die "kwok stages missing: $KVC_KWOK_STAGES (run $HERE/build.sh kwok)"
  cp "$KVC_KWOK_STAGES" "$D/kwok-stages.yaml"
  # The fake nodes' Pod IPs lead nowhere: a request to one (the operator reads every Ready
  # engine Pod's metrics) fails at once here instead of leaving the machine by the default route.
  if [ "$(id -u)" = 0 ]; then
    ip route replace unreachable "$KWOK_POD_CIDR" || die "could not route $KWOK_POD_CIDR to unreachable"
  else
    log "WARNING: not root: requests to the fake nodes' Pod IPs ($KWOK_POD_CIDR) follow the default route"
  fi
  # kwok takes only the Nodes annotated as fake (never a real node's status or Pods).
  start kwok --kubeconfig="$D/admin.kubeconfig" --config="$D/kwok-stages.yaml" \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake --cidr="$KWOK_POD_CIDR" --node-ip=127.0.0.1 \
    --node-lease-duration-seconds=40 --server-address=""

  local K=("$KVC_K8S_BIN/kubectl" --kubeconfig="$D/admin.kubeconfig")
  local nf=${KVC_NODES:-2} i extra
  NODE_NAMES=""
  for (( i=0; i<nf; i++ )); do
    # every other node carries kvcache=true (the label the walkthrough's disk-tier backend selects)
    extra=""; (( i % 2 == 1 )) && extra='    kvcache: "true"'
    node_manifest "kwok-node-$i" "$extra" | "${K[@]}" apply -f - >/dev/null
    NODE_NAMES="$NODE_NAMES kwok-node-$i"
  done
  NODE_NAMES=${NODE_NAMES# }
  wait_for 90 "$nf fake nodes Ready" "${K[@]}" wait --for=condition=Ready node -l type=kwok --timeout=5s \
    || { tail -20 "$D/kwok.log" >&2; die "fake nodes did not become Ready (log: $D/kwok.log)"; }
  (( n > 0 )) && real_nodes_up
  wait_for 90 "ServiceAccount default/default present" "${K[@]}" -n default get serviceaccount default \
    || { tail -20 "$D/kube-controller-manager.log" >&2; die "no default ServiceAccount (log: $D/kube-controller-manager.log)"; }
  all_alive || { status_report >&2 || true; die "a component exited during start-up; logs in $D"; }
  write_env
  log "cluster up in $((SECONDS - T0))s: . $D/env   (kubectl from $KVC_K8S_BIN)"
}

status_report() {
  local ok=0 c
  for c in $(components); do
    if pid_alive "$c"; then printf '%-24s running (pid %s)\n' "$c" "$(cat "$D/$c.pid")"
    else printf '%-24s NOT running\n' "$c"; ok=1; fi
  done
  if readyz; then echo "readyz                   ok ($KVC_APISERVER_PORT)"; else echo "readyz                   NOT ok"; ok=1; fi
  if [ $ok = 0 ]; then
    "$KVC_K8S_BIN/kubectl" --kubeconfig="$D/admin.kubeconfig" get nodes -L type -o wide 2>&1 | sed 's/^/  /'
    if (( $(nodes_of_dir) > 0 )); then
      "$KVC_K8S_BIN/kubectl" --kubeconfig="$D/admin.kubeconfig" -n kube-system get deploy,svc -l k8s-app=kube-dns 2>&1 | sed 's/^/  /'
      nodes_status || ok=1
    fi
  fi
  echo "logs: $D/*.log"
  return $ok
}

main() {
  local cmd=${1:-}; shift || true
  local purge=0 args=()
  for a in "$@"; do
    case $a in --purge) purge=1 ;; *) args+=("$a") ;; esac
  done
  D=${args[0]:-${KVC_CLUSTER_DIR:-$KVC_CACHE_DIR/cluster}}
  mkdir -p "$(dirname "$D")"
  D=$(cd "$(dirname "$D")" && pwd)/$(basename "$D")
  case $cmd in
    up) cmd_up ;;
    down)
      if [ ! -e "$D/$MARKER" ]; then log "nothing to stop in $D"; return 0; fi
      stop_all
      if [ $purge = 1 ]; then
        rm -rf "$D/etcd-data" "$D/pki" "$D/kcm-certs" "$D/apiserver-certs" "$D/scheduler-certs"
        rm -rf "$D"/node-* "$D/cni" "$D"/*.kubeconfig "$D/admission.yaml" "$D/podnodeselector.yaml" \
          "$D/kube-proxy.yaml" "$D/resolv.conf"
        rm -f "$D"/*.log "$D"/*.log.prev "$D/admin.kubeconfig" "$D/env" "$D/ports.env" \
          "$D/kwok-stages.yaml" "$D/$MARKER"
        rmdir "$D" 2>/dev/null || true
        log "stopped and purged $D"
      else
        log "stopped (logs and PKI kept in $D; --purge removes them)"
      fi ;;
    env)
      [ -s "$D/env" ] || die "no cluster environment in $D (run: $0 up $D)"
      cat "$D/env" ;;
    status)
      [ -e "$D/$MARKER" ] || die "no cluster in $D"
      status_report ;;
    load)
      [ -e "$D/$MARKER" ] || die "no cluster in $D"
      load_images "${args[@]:1}" ;;
    netpol-down)
      { [ -e "$D/$MARKER" ] && netpol_of_dir; } || die "no cluster with NetworkPolicy enforcement in $D"
      stop_group kube-router
      netpol_flush
      log "NetworkPolicy is no longer enforced in $D (netpol-up enforces it again)" ;;
    netpol-up)
      { [ -e "$D/$MARKER" ] && netpol_of_dir; } || die "no cluster with NetworkPolicy enforcement in $D"
      if pid_alive kube-router; then log "kube-router already runs"; return 0; fi
      K=("$KVC_K8S_BIN/kubectl" --kubeconfig="$D/admin.kubeconfig")
      kube_router_start
      wait_for 60 "kube-router enforcing NetworkPolicy" kube_router_synced \
        || die "kube-router did not sync (log: $D/kube-router.log)" ;;
    *) sed -n '2,24p' "$0" >&2; exit 2 ;;
  esac
}
main "$@"
