# shellcheck shell=bash
# Real nodes of the test cluster, sourced by cluster.sh: per node a containerd (own config, root,
# state and socket under DIR/node-N) and a kubelet (own root dir, cgroup root, node address and
# client certificate); for the machine one kube-proxy, one kube-router enforcing NetworkPolicy, one
# Pod bridge and CoreDNS as a Deployment.
#
# Every real node has the same InternalIP, the bridge's gateway 10.210.0.1 (node n's kubelet on
# port 10250 + 10n): the nodes share the host's network namespace, so one firewall must guard all
# their Pods, and kube-router guards exactly the Pods whose hostIP is its node's IP. Two instances
# would fight over the same iptables chains.
#
# Safety (this workplace allows traffic to loopback and to what we create, nothing else):
#   - Pods sit on our bridge with no default route (only the Service range, via the bridge); a
#     mangle rule drops anything forwarded off the bridge or onto it from elsewhere; the host
#     routes the Service range to the bridge, so an unmatched ClusterIP never leaves via eth0.
#   - containerd pulls through a proxy at a dead loopback port: an image that was not imported
#     fails at once (ErrImagePull) instead of reaching a registry.
#   - CoreDNS answers cluster names only (no upstream), and Pods get our own resolv.conf.
#   - Every host setting the pieces change (sysctls, iptables, fixed paths, cgroups, netns) is
#     recorded in DIR/host-state before `up` starts anything and restored by `down`.
# kube-proxy's iptables chains and the bridge are per machine, so one cluster at a time has real
# nodes: `up` refuses while another cluster's bridge exists (KVC_REAL_NODES=0 for more clusters).

NODE_BRIDGE=kvcbr0
NODE_PREFIX=10.210                     # the bridge's /16: .0.1 is every node and the API server
NODE_GATEWAY=$NODE_PREFIX.0.1
SERVICE_CIDR=10.96.0.0/16
CLUSTER_DNS=10.96.0.10
# Host settings the pieces change: the bridge plugin (ip_forward), the kubelet (panic, overcommit).
HOST_SYSCTLS=(net.ipv4.ip_forward kernel.panic kernel.panic_on_oops vm.overcommit_memory
              net.bridge.bridge-nf-call-iptables net.ipv4.conf.all.route_localnet)
# What images/build.sh writes for the two images every node needs.
IMAGES_ENV_PAUSE=$KVC_CACHE_DIR/images/pause.env
IMAGES_ENV_COREDNS=$KVC_CACHE_DIR/images/coredns.env
# Paths outside DIR that containerd and the kubelet use whatever their configuration says.
HOST_PATHS=(/run/containerd /var/lib/kubelet /var/log/containers /var/lib/cni /var/run/netns)

real_nodes() { echo "${KVC_REAL_NODES:-2}"; }
node_name() { echo "real-node-$1"; }
node_ip() { echo "$NODE_GATEWAY"; }
kubelet_port() { echo $((10250 + 10 * $1)); }
kubelet_healthz_port() { echo $((10248 + 10 * $1)); }
# NetworkPolicy enforcement (kube-router) runs unless KVC_NETPOL=0; the record of `up` wins.
netpol_of_dir() {
  if [ -s "$D/ports.env" ] && grep -q '^KVC_NETPOL=' "$D/ports.env"; then
    [ "$(sed -n 's/^KVC_NETPOL=//p' "$D/ports.env")" != 0 ]
  else [ "${KVC_NETPOL:-1}" != 0 ]; fi
}
node_dir() { echo "$D/node-$1"; }
containerd_sock() { echo "$(node_dir "$1")/containerd/containerd.sock"; }

crictl_on() { # crictl_on N ARGS...: crictl against node N's containerd
  local n=$1; shift
  "$KVC_CRICTL_BIN/crictl" --runtime-endpoint "unix://$(containerd_sock "$n")" \
    --image-endpoint "unix://$(containerd_sock "$n")" --timeout 10s "$@"
}

# Refuse early and clearly instead of half-starting.
nodes_preflight() {
  [ "$(id -u)" = 0 ] || die "real nodes need root (containerd, the kubelet, iptables); KVC_REAL_NODES=0 runs fake nodes only"
  need containerd containerd; need runc runc; need ctr containerd; need iptables iptables
  need iptables-save iptables; need conntrack conntrack; need ip iproute2
  [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] \
    || die "CNI plugins missing in /usr/lib/cni (apt-get install containernetworking-plugins)"
  [ -x "$KVC_CRICTL_BIN/crictl" ] || die "crictl is not built ($KVC_CRICTL_BIN; run $HERE/build.sh crictl)"
  if [ "${KVC_NETPOL:-1}" != 0 ]; then
    need ipset ipset
    [ -x "$KVC_KUBE_ROUTER_BIN/kube-router" ] || die "kube-router is not built ($KVC_KUBE_ROUTER_BIN; run $HERE/build.sh kube-router), or start with KVC_NETPOL=0"
  fi
  if [ ! -e /proc/sys/net/bridge/bridge-nf-call-iptables ]; then
    modprobe br_netfilter 2>/dev/null || true
    [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] \
      || die "br_netfilter is not loaded and cannot be (ClusterIPs from Pods need it); KVC_REAL_NODES=0 runs fake nodes only"
  fi
  if ip link show "$NODE_BRIDGE" >/dev/null 2>&1; then
    local owner; owner=$(ip -o link show "$NODE_BRIDGE" | sed -n 's/.* alias \(.*\)$/\1/p')
    if [ "$owner" != "kvcache-operator:$D" ]; then
      if [[ $owner == kvcache-operator:/* ]] && ! cluster_alive "${owner#kvcache-operator:}"; then
        reclaim_dead_cluster "${owner#kvcache-operator:}"
      else
        die "another cluster's real nodes run on this machine (bridge $NODE_BRIDGE, ${owner:-no owner}): kube-proxy's iptables and the bridge are per machine. Stop it (cluster.sh down ${owner#kvcache-operator:}) or start this one with KVC_REAL_NODES=0"
      fi
    fi
  fi
}

# cluster_alive DIR: a process of the cluster in DIR still runs (its API server, etcd, a kubelet
# or a containerd, each checked by its saved pid and binary).
cluster_alive() (
  D=$1
  local f
  for f in "$D"/kube-apiserver.pid "$D"/etcd.pid "$D"/kubelet-*.pid "$D"/containerd-*.pid; do
    [ -e "$f" ] && pid_alive "$(basename "$f" .pid)" && return 0
  done
  return 1
)

# reclaim_dead_cluster DIR: the cluster in DIR had real nodes and its processes are gone without
# a `down` (its session was ended, a CI run was killed): the bridge, kube-proxy's rules, mounts,
# network namespaces and cgroups it left would make this `up` refuse or misroute. With its record
# of the host settings, its own `down` undoes them exactly; without one (DIR was removed), what
# our pieces add is removed by name: the bridge, rules naming it or kube-proxy's KUBE- chains, the
# CNI's cni-* namespaces, mounts and processes under DIR.
reclaim_dead_cluster() {
  local odir=$1 pid n
  log "the real nodes of a cluster that no longer runs ($odir) left their host settings behind: undoing them"
  if [ -e "$odir/host-state/recorded" ]; then
    ( D=$odir; stop_all ) || die "could not undo the host settings of $odir (cluster.sh down $odir)"
    return 0
  fi
  for pid in $(pgrep -f -- "-address $odir/" || true); do kill -KILL "$pid" 2>/dev/null || true; done
  umount_under "$odir"
  for n in $(ls /var/run/netns 2>/dev/null | grep '^cni-' || true); do ip netns delete "$n" 2>/dev/null || true; done
  ip link delete "$NODE_BRIDGE" 2>/dev/null || true
  iptables-save | grep -v -e "$NODE_BRIDGE" -e 'KUBE-' | iptables-restore \
    || die "could not remove the iptables rules of $odir"
  destroy_peer_sets
}

# --- host state ----------------------------------------------------------------------------

record_host_state() {
  local H=$D/host-state s p
  [ -e "$H/recorded" ] && return 0     # a crashed run's record is the one that holds the truth
  mkdir -p "$H"
  for s in "${HOST_SYSCTLS[@]}"; do
    [ -e "/proc/sys/${s//.//}" ] && echo "$s=$(sysctl -n "$s")"
  done >"$H/sysctl"
  for p in "${HOST_PATHS[@]}"; do [ -e "$p" ] && echo "$p"; done >"$H/paths"
  ls /var/run/netns 2>/dev/null >"$H/netns" || :
  iptables-save >"$H/iptables"
  if command -v ipset >/dev/null; then ipset list -n >"$H/ipsets" 2>/dev/null || :; fi
  if command -v ip6tables-save >/dev/null && ip6tables-save >/dev/null 2>&1; then ip6tables-save >"$H/ip6tables"; fi
  touch "$H/recorded"
}

restore_host_state() {
  local H=$D/host-state line p n
  [ -e "$H/recorded" ] || return 0
  # Network namespaces the CNI left (only those that did not exist before), then the bridge.
  for n in $(ls /var/run/netns 2>/dev/null); do
    grep -qx "$n" "$H/netns" || ip netns delete "$n" 2>/dev/null || true
  done
  ip link delete "$NODE_BRIDGE" 2>/dev/null || true
  restore_tables iptables "$H/iptables"
  [ -e "$H/ip6tables" ] && restore_tables ip6tables "$H/ip6tables"
  [ -e "$H/ipsets" ] && destroy_kube_router_sets "$H/ipsets"   # only once no rule names them
  while IFS= read -r line; do
    sysctl -q -w "$line" >/dev/null || log "WARNING: could not restore sysctl $line"
  done <"$H/sysctl"
  for p in "${HOST_PATHS[@]}"; do
    grep -qx "$p" "$H/paths" || remove_created_path "$p"
  done
  rm -rf "$H"
}

# destroy_kube_router_sets BEFORE: the ipsets kube-router made (its KUBE-SRC-/KUBE-DST- peer
# sets and the rest) that the list in the file BEFORE does not name.
destroy_kube_router_sets() {
  local s
  command -v ipset >/dev/null || return 0
  for s in $(ipset list -n 2>/dev/null); do
    grep -qx -- "$s" "$1" || ipset destroy "$s" 2>/dev/null || log "WARNING: could not destroy ipset $s"
  done
}

# netpol_flush: the rules and chains a stopped kube-router leaves in the filter table (it never
# removes them itself), then its peer ipsets, so that nothing is enforced any more. Not
# `kube-router --cleanup-config`: that also cleans up after its router and service proxy, which
# this cluster does not run, and which would touch IPVS and interfaces.
netpol_flush() {
  iptables-save -t filter | grep -v -E 'KUBE-ROUTER-|KUBE-POD-FW-|KUBE-NWPLCY-' | iptables-restore -T filter \
    || log "WARNING: could not remove kube-router's filter rules"
  destroy_peer_sets
}

# destroy_peer_sets: kube-router's ipsets, by their names (once no rule names them).
destroy_peer_sets() {
  local s
  command -v ipset >/dev/null || return 0
  for s in $(ipset list -n 2>/dev/null | grep -E '^(KUBE-SRC-|KUBE-DST-|TMP-)' || true); do
    ipset destroy "$s" 2>/dev/null || log "WARNING: could not destroy ipset $s"
  done
}

# restore_tables iptables|ip6tables SNAPSHOT: every table as it was; a table the snapshot lacks
# (none of its rules existed: kube-proxy made it) is emptied, since a restore replaces only the
# tables it names.
restore_tables() {
  local cmd=$1 snap=$2 t
  {
    cat "$snap"
    for t in $("$cmd-save" 2>/dev/null | sed -n 's/^\*//p'); do
      grep -qx "\*$t" "$snap" || printf '*%s\nCOMMIT\n' "$t"
    done
  } | "$cmd-restore" || log "WARNING: could not restore $cmd from $snap"
}

# remove_created_path P: P did not exist before `up`; take away what our pieces left in it.
remove_created_path() {
  local p=$1
  [ -e "$p" ] || return 0
  umount_under "$p"
  rm -rf "$p" || log "WARNING: could not remove $p"
}

# umount_under P: unmount every mount point at or below P, deepest first.
umount_under() {
  local m
  awk -v p="$1" '$2 == p || index($2, p "/") == 1 {print $2}' /proc/self/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
}

# --- network -------------------------------------------------------------------------------

net_up() {
  local i
  if ! ip link show "$NODE_BRIDGE" >/dev/null 2>&1; then
    ip link add "$NODE_BRIDGE" type bridge
    ip link set "$NODE_BRIDGE" alias "kvcache-operator:$D"
  fi
  ip addr replace "$NODE_GATEWAY/16" dev "$NODE_BRIDGE"
  ip link set "$NODE_BRIDGE" up
  ip route replace "$SERVICE_CIDR" dev "$NODE_BRIDGE" src "$NODE_GATEWAY"
  # mangle, because kube-proxy's filter rules run first; both directions, so the bridge is an island.
  iptables -t mangle -C FORWARD -i "$NODE_BRIDGE" ! -o "$NODE_BRIDGE" -j DROP 2>/dev/null \
    || iptables -t mangle -A FORWARD -i "$NODE_BRIDGE" ! -o "$NODE_BRIDGE" -j DROP
  iptables -t mangle -C FORWARD ! -i "$NODE_BRIDGE" -o "$NODE_BRIDGE" -j DROP 2>/dev/null \
    || iptables -t mangle -A FORWARD ! -i "$NODE_BRIDGE" -o "$NODE_BRIDGE" -j DROP
  mkdir -p "$D/cni/net.d" "$D/cni/ipam"
  cat >"$D/cni/net.d/10-kvcache.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "kvcache",
  "plugins": [{
    "type": "bridge", "bridge": "$NODE_BRIDGE",
    "isGateway": true, "isDefaultGateway": false, "ipMasq": false, "hairpinMode": true,
    "ipam": {
      "type": "host-local", "dataDir": "$D/cni/ipam",
      "ranges": [[{"subnet": "$NODE_PREFIX.0.0/16", "rangeStart": "$NODE_PREFIX.1.1",
                   "rangeEnd": "$NODE_PREFIX.254.254", "gateway": "$NODE_GATEWAY"}]],
      "routes": [{"dst": "$SERVICE_CIDR"}]
    }
  }]
}
EOF
  : >"$D/resolv.conf"   # Pods with dnsPolicy Default get no nameserver: nothing leaves the cluster
}

# --- PKI of the nodes ------------------------------------------------------------------------

# client_cert NAME SUBJECT: a client certificate NAME.crt/.key signed by the cluster CA.
client_cert() {
  local P=$D/pki
  openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$P/$1.key" -out "$P/$1.csr" 2>/dev/null
  printf '%s\n' 'extendedKeyUsage=clientAuth' 'keyUsage=critical,digitalSignature,keyEncipherment' >"$P/$1.ext"
  openssl x509 -req -in "$P/$1.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -days 365 \
    -out "$P/$1.crt" -extfile "$P/$1.ext" 2>/dev/null
  rm -f "$P/$1.csr" "$P/$1.ext"; chmod 600 "$P/$1.key"
}

# kubeconfig_for NAME: a kubeconfig at DIR/NAME.kubeconfig using pki/NAME.{crt,key}.
kubeconfig_for() {
  cat >"$D/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- {name: kvcache-test, cluster: {server: "$APISERVER_URL", certificate-authority: "$D/pki/ca.crt"}}
users:
- {name: $1, user: {client-certificate: "$D/pki/$1.crt", client-key: "$D/pki/$1.key"}}
contexts:
- {name: $1, context: {cluster: kvcache-test, user: $1}}
current-context: $1
EOF
  chmod 600 "$D/$1.kubeconfig"
}

nodes_pki() {
  local i
  client_cert kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  client_cert kube-proxy "/CN=system:kube-proxy"
  kubeconfig_for kube-proxy
  client_cert kube-router "/CN=system:kube-router"
  kubeconfig_for kube-router
  for (( i=0; i<$(real_nodes); i++ )); do
    client_cert "$(node_name "$i")" "/O=system:nodes/CN=system:node:$(node_name "$i")"
    kubeconfig_for "$(node_name "$i")"
  done
}

# --- containerd ------------------------------------------------------------------------------

containerd_start() {
  local n=$1 C; C=$(node_dir "$n")/containerd
  mkdir -p "$C"
  cat >"$C/config.toml" <<EOF
version = 2
root = "$C/root"
state = "$C/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
                    "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$C/containerd.sock"
[ttrpc]
  address = "$C/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$C/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # root here lacks CAP_SYS_RESOURCE: without this runc fails writing oom_score_adj.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$D/cni/net.d"
EOF
  log "starting containerd of $(node_name "$n")"
  # HTTP(S)_PROXY at a dead loopback port: any pull of an image we did not import fails locally.
  HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY= \
    setsid containerd --config "$C/config.toml" </dev/null >>"$D/containerd-$n.log" 2>&1 &
  echo $! >"$D/containerd-$n.pid"
}

# import_images N ARCHIVE...: load docker-archive images into node N's containerd (CRI namespace).
import_images() {
  local n=$1 a; shift
  for a in "$@"; do
    ctr --address "$(containerd_sock "$n")" -n k8s.io images import "$a" >/dev/null \
      || die "could not import $a into $(node_name "$n")"
  done
}

# --- kubelet ---------------------------------------------------------------------------------

# cgroup_dirs N: the kubelet's cgroup root of node N in every mounted v1 hierarchy (and v2, if any).
cgroup_dirs() {
  local h
  for h in /sys/fs/cgroup/*/; do
    [ -e "$h/cgroup.procs" ] && echo "${h%/}/kvcache-operator/$(node_name "$1")"
  done
  [ -e /sys/fs/cgroup/cgroup.procs ] && echo "/sys/fs/cgroup/kvcache-operator/$(node_name "$1")"
  return 0
}

kubelet_start() {
  local n=$1 K name ip c; K=$(node_dir "$n")/kubelet; name=$(node_name "$n"); ip=$(node_ip "$n")
  mkdir -p "$K/root" "$K/pod-logs" "$K/certs"
  for c in $(cgroup_dirs "$n"); do mkdir -p "$c"; done
  cat >"$K/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: $(kubelet_port "$n")
readOnlyPort: 0
healthzBindAddress: $ip
healthzPort: $(kubelet_healthz_port "$n")
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$D/pki/ca.crt"}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
cgroupRoot: /kvcache-operator/$name
# This machine is cgroup v1 (hybrid); Kubernetes 1.36 refuses v1 unless told otherwise.
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$(containerd_sock "$n")
imageServiceEndpoint: unix://$(containerd_sock "$n")
podLogsDir: $K/pod-logs
resolvConf: $D/resolv.conf
clusterDNS: [$CLUSTER_DNS]
clusterDomain: cluster.local
# Imported images cannot be pulled back: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
makeIPTablesUtilChains: false
serializeImagePulls: false
maxPods: 110
enforceNodeAllocatable: [pods]
EOF
  log "starting kubelet $name ($ip)"
  setsid "$KVC_K8S_BIN/kubelet" --config="$K/config.yaml" --kubeconfig="$D/$name.kubeconfig" \
    --root-dir="$K/root" --cert-dir="$K/certs" --hostname-override="$name" --node-ip="$ip" \
    --node-labels="type=real,kvcache=true" </dev/null >>"$D/kubelet-$n.log" 2>&1 &
  echo $! >"$D/kubelet-$n.pid"
}

# --- kube-proxy ------------------------------------------------------------------------------

kube_proxy_start() {
  cat >"$D/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$D/kube-proxy.kubeconfig"}
mode: iptables
clusterCIDR: $NODE_PREFIX.0.0/16
hostnameOverride: $(node_name 0)
bindAddress: $NODE_GATEWAY
healthzBindAddress: $NODE_GATEWAY:10256
metricsBindAddress: $NODE_GATEWAY:10249
nodePortAddresses: ["$NODE_GATEWAY/32"]
# No host-wide conntrack tuning and no route_localnet: kube-proxy leaves those sysctls alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
EOF
  log "starting kube-proxy"
  setsid "$KVC_K8S_BIN/kube-proxy" --config="$D/kube-proxy.yaml" </dev/null >>"$D/kube-proxy.log" 2>&1 &
  echo $! >"$D/kube-proxy.pid"
}

# --- kube-router: NetworkPolicy --------------------------------------------------------------

# What it reads: Pods, Namespaces, NetworkPolicies and its Node for the firewall, and Services and
# their endpoints, whose caches it waits for whatever it runs (upstream's ClusterRole, read-only:
# none of the writes its router and service proxy make).
kube_router_rbac() {
  cat <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:kube-router"}
rules:
- {apiGroups: [""], resources: [namespaces, pods, nodes, services, endpoints], verbs: [get, list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get, list, watch]}
- {apiGroups: [networking.k8s.io], resources: [networkpolicies], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:kube-router"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kube-router"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:kube-router"}
EOF
}

# One instance for every node (see the top of this file): firewall only, no routing, no service
# proxy (kube-proxy does that), no CNI, no health or metrics listener.
kube_router_start() {
  kube_router_rbac | "${K[@]}" apply -f - >/dev/null
  log "starting kube-router (NetworkPolicy)"
  setsid "$KVC_KUBE_ROUTER_BIN/kube-router" --kubeconfig="$D/kube-router.kubeconfig" \
    --hostname-override="$(node_name 0)" --run-firewall=true --run-router=false \
    --run-service-proxy=false --run-loadbalancer=false --enable-cni=false --enable-ipv6=false \
    --health-port=0 --metrics-port=0 --service-cluster-ip-range="$SERVICE_CIDR" \
    </dev/null >>"$D/kube-router.log" 2>&1 &
  echo $! >"$D/kube-router.pid"
}

# Its chains are hooked into the filter table: it has synced once.
kube_router_synced() { iptables -S KUBE-ROUTER-FORWARD >/dev/null 2>&1; }

# --- CoreDNS ---------------------------------------------------------------------------------

coredns_manifest() {
  cat <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  # Cluster names only: no forward plugin, so no query ever leaves the cluster.
  Corefile: |
    .:1053 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
        }
        cache 30
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      nodeSelector: {type: real}
      priorityClassName: system-cluster-critical
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        imagePullPolicy: Never
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 1053, protocol: UDP}
        - {name: dns-tcp, containerPort: 1053, protocol: TCP}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 1}
        livenessProbe: {httpGet: {path: /health, port: 8080}, periodSeconds: 10}
        resources: {requests: {cpu: 10m, memory: 32Mi}, limits: {memory: 128Mi}}
        securityContext: {runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  selector: {k8s-app: kube-dns}
  clusterIP: $CLUSTER_DNS
  ports:
  - {name: dns, port: 53, targetPort: 1053, protocol: UDP}
  - {name: dns-tcp, port: 53, targetPort: 1053, protocol: TCP}
EOF
}

# --- tear-down -------------------------------------------------------------------------------

# Pods of the real nodes go first, through the CRI, so the CNI tears their network down.
remove_node_pods() {
  local i
  for (( i=0; i<$(real_nodes); i++ )); do
    [ -S "$(containerd_sock "$i")" ] && pid_alive "containerd-$i" containerd || continue
    crictl_on "$i" rmp --all --force >/dev/null 2>&1 || true
  done
}

# After containerd: shims of our sockets that outlived it, mounts under DIR, our cgroups.
clean_node_leftovers() {
  local i pid c
  for (( i=0; i<$(real_nodes); i++ )); do
    for pid in $(pgrep -f -- "-address $(containerd_sock "$i")" || true); do kill -KILL "$pid" 2>/dev/null || true; done
  done
  umount_under "$D"
  for (( i=0; i<$(real_nodes); i++ )); do
    for c in $(cgroup_dirs "$i"); do
      [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
      rmdir "$(dirname "$c")" 2>/dev/null || true
    done
  done
}

# --- bring-up, status, images ----------------------------------------------------------------

# PodNodeSelector: a Pod whose namespace carries no scheduler.alpha.kubernetes.io/node-selector
# annotation gets nodeSelector type=kwok, so engine Pods (which cannot run here) and test Pods land
# on fake nodes; a namespace annotated with "" (kube-system, or any a test opts in) places its Pods
# by their own selectors, real nodes included; gpustack-system is annotated type=real: the
# operator and a managed backend's store run there, and a leader has no selector of its own.
node_admission_config() {
  cat >"$D/podnodeselector.yaml" <<EOF2
podNodeSelectorPluginConfig:
  clusterDefaultNodeSelector: type=kwok
EOF2
  cat >"$D/admission.yaml" <<EOF2
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- {name: PodNodeSelector, path: "$D/podnodeselector.yaml"}
EOF2
}

# opt_in_namespace NS [SELECTOR]: Pods of NS are placed by their own selectors (real nodes
# included), merged with SELECTOR when one is given.
opt_in_namespace() {
  "${K[@]}" get namespace "$1" >/dev/null 2>&1 || "${K[@]}" create namespace "$1" >/dev/null
  "${K[@]}" annotate namespace "$1" --overwrite scheduler.alpha.kubernetes.io/node-selector="${2:-}" >/dev/null
}

real_nodes_up() {
  local n i; n=$(real_nodes)
  for (( i=0; i<n; i++ )); do containerd_start "$i"; done
  for (( i=0; i<n; i++ )); do
    wait_for 60 "containerd of $(node_name "$i") serving" \
      ctr --address "$(containerd_sock "$i")" version \
      || { tail -20 "$D/containerd-$i.log" >&2; die "containerd of $(node_name "$i") did not start (log: $D/containerd-$i.log)"; }
    import_images "$i" "$KVC_IMAGE_PAUSE_ARCHIVE" "$KVC_IMAGE_COREDNS_ARCHIVE"
  done
  for (( i=0; i<n; i++ )); do kubelet_start "$i"; done
  kube_proxy_start
  wait_for 90 "$n real nodes Ready" "${K[@]}" wait --for=condition=Ready node -l type=real --timeout=5s \
    || { tail -30 "$D/kubelet-0.log" >&2; die "real nodes did not become Ready (logs: $D/kubelet-*.log)"; }
  [ "$("${K[@]}" get nodes -l type=real -o name | wc -l)" = "$n" ] || die "expected $n real nodes"
  if netpol_of_dir; then
    kube_router_start
    wait_for 60 "kube-router enforcing NetworkPolicy" kube_router_synced \
      || { tail -20 "$D/kube-router.log" >&2; die "kube-router did not sync (log: $D/kube-router.log)"; }
  fi
  opt_in_namespace kube-system
  opt_in_namespace gpustack-system type=real
  coredns_manifest | "${K[@]}" apply -f - >/dev/null
  wait_for 120 "CoreDNS available" "${K[@]}" -n kube-system wait --for=condition=Available deploy/coredns --timeout=5s \
    || { "${K[@]}" -n kube-system describe pods -l k8s-app=kube-dns >&2 || true; die "CoreDNS did not become available"; }
  for (( i=0; i<n; i++ )); do
    REAL_NODE_NAMES="$REAL_NODE_NAMES $(node_name "$i")"
    CONTAINERD_SOCKETS="$CONTAINERD_SOCKETS $(containerd_sock "$i")"
  done
  REAL_NODE_NAMES=${REAL_NODE_NAMES# } CONTAINERD_SOCKETS=${CONTAINERD_SOCKETS# }
}

nodes_status() {
  local i ok=0 n; n=$(nodes_of_dir)
  for (( i=0; i<n; i++ )); do
    printf '%-24s %s pods, %s images (crictl against %s)\n' "$(node_name "$i")" \
      "$(crictl_on "$i" pods -q 2>/dev/null | wc -l)" "$(crictl_on "$i" images -q 2>/dev/null | wc -l)" "$(containerd_sock "$i")"
  done
  printf '%-24s %s\n' "bridge $NODE_BRIDGE" "$(ip -br addr show "$NODE_BRIDGE" 2>/dev/null | awk '{$1=""; print}' || echo missing)"
  [ -e "$D/host-state/recorded" ] && echo "host state               recorded in $D/host-state (restored by down)"
  "$KVC_K8S_BIN/kubectl" --kubeconfig="$D/admin.kubeconfig" -n kube-system get deploy coredns \
    -o jsonpath='{.status.availableReplicas}' 2>/dev/null | grep -q '^[1-9]' || { echo "CoreDNS                  NOT available"; ok=1; }
  return $ok
}

# load_images [ARCHIVE...]: import into every real node; no argument = every image images/build.sh
# has built ($KVC_CACHE_DIR/images/*.env).
load_images() {
  local n i a archives=("$@") f t0=$SECONDS
  n=$(nodes_of_dir)
  (( n > 0 )) || die "this cluster has no real nodes (KVC_REAL_NODES=0): nothing to load into"
  if [ ${#archives[@]} -eq 0 ]; then
    for f in "$KVC_CACHE_DIR"/images/*.env; do
      [ -e "$f" ] || continue
      a=$(sed -n 's/^KVC_IMAGE_[A-Z]*_ARCHIVE=//p' "$f")
      [ -s "$a" ] && archives+=("$a")
    done
  fi
  [ ${#archives[@]} -gt 0 ] || die "no image archives to load (build them: images/build.sh)"
  for (( i=0; i<n; i++ )); do import_images "$i" "${archives[@]}"; done
  log "loaded ${#archives[@]} image(s) into $n node(s) in $((SECONDS - t0))s"
}
