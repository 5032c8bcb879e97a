#!/usr/bin/env bash
# Builds the test cluster from Go modules (no Docker, no release downloads):
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl,
#   kubelet, kube-proxy (the real nodes)                              (k8s.io/kubernetes, wrapper module)
#   etcd, etcdctl                                                     (go.etcd.io/etcd, wrapper module)
#   kwok + its Stage objects                                          (sigs.k8s.io/kwok, go install)
#   coredns (cluster DNS, packed into an image by images/build.sh)    (github.com/coredns/coredns, go install)
#   crictl (the real nodes' CRI client: status, debugging, tear-down) (sigs.k8s.io/cri-tools, go install)
#   helm (renders deploy/helm for the test that compares it with kustomize) (helm.sh/helm/v3, go install)
#   kube-router (enforces NetworkPolicy on the real nodes, firewall only) (github.com/cloudnativelabs/kube-router/v2)
#   prometheus, promtool (checks the monitoring kit: deploy/monitoring)  (github.com/prometheus/prometheus, go install)
# into ${KVC_CACHE_DIR:-$HOME/.cache/kvcache-operator}/tools/<component>-<version>/bin.
# A component whose stamp file and binaries are present is skipped; anything absent is rebuilt.
#
# usage: build.sh [--check] [--force] [all|kubernetes|etcd|kwok|coredns|crictl|helm|kube-router|prometheus ...]
#   --check   exit 0 if every requested component is built, 1 otherwise (builds nothing)
#   --force   rebuild even when the stamp is present
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=paths.sh
. "$HERE/paths.sh"

CHECK=0 FORCE=0 WANT=()
for a in "$@"; do
  case $a in
    --check) CHECK=1 ;;
    --force) FORCE=1 ;;
    all|kubernetes|etcd|kwok|coredns|crictl|helm|kube-router|prometheus) WANT+=("$a") ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
[ ${#WANT[@]} -gt 0 ] || WANT=(all)
[[ " ${WANT[*]} " == *" all "* ]] && WANT=(etcd kubernetes kwok coredns crictl helm kube-router prometheus)

K8S_BINS=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy)
ETCD_BINS=(etcd etcdctl)
KWOK_BINS=(kwok)
COREDNS_BINS=(coredns)
CRICTL_BINS=(crictl)
HELM_BINS=(helm)
KUBE_ROUTER_BINS=(kube-router)
PROMETHEUS_BINS=(prometheus promtool)

log() { printf '[build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

stamp_id() { echo "$1-$2-recipe$KVC_BUILD_RECIPE"; }

# is_built DIR ID BIN...: the stamp names ID and every binary is executable.
is_built() {
  local dir=$1 id=$2; shift 2
  [ -f "$dir/.stamp" ] && grep -qx "id=$id" "$dir/.stamp" || return 1
  local b; for b in "$@"; do [ -x "$dir/bin/$b" ] || return 1; done
  [ "$dir" != "$KVC_KWOK_DIR" ] || [ -s "$KVC_KWOK_STAGES" ]
}

write_stamp() {
  local dir=$1 id=$2 secs=$3
  { echo "id=$id"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "go=$(go env GOVERSION)"
    echo "seconds=$secs"; } >"$dir/.stamp"
}

# run_ticking LABEL CMD...: run CMD, printing a progress line every 30 s.
run_ticking() {
  local label=$1; shift
  local t0=$SECONDS next=30 pid rc
  log "building $label ..."
  "$@" &
  pid=$!
  trap 'kill "$pid" 2>/dev/null; exit 130' INT TERM
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if (( SECONDS - t0 >= next )); then
      log "  ... still building $label: $((SECONDS - t0))s elapsed"
      next=$((next + 30))
    fi
  done
  if wait "$pid"; then rc=0; else rc=$?; fi
  trap - INT TERM
  if [ $rc -eq 0 ]; then
    log "built $label in $((SECONDS - t0))s"
    echo "$label $((SECONDS - t0))" >>"$TIMES"
  else
    log "FAILED building $label (exit $rc) after $((SECONDS - t0))s"
  fi
  return $rc
}

# The Go environment of every build: toolchain pinned, no cgo, module mode that may update go.sum.
export GOTOOLCHAIN=$KVC_GOTOOLCHAIN
export CGO_ENABLED=0
export GOFLAGS="-mod=mod -buildvcs=false"
export GOWORK=off

build_etcd() {
  local V=$KVC_ETCD_VERSION D=$KVC_ETCD_DIR id t0=$SECONDS
  id=$(stamp_id etcd "$V")
  if [ $FORCE = 0 ] && is_built "$D" "$id" "${ETCD_BINS[@]}"; then log "etcd $V: present in $D (skip)"; return 0; fi
  [ $CHECK = 1 ] && { log "etcd $V: NOT built ($D)"; return 1; }
  rm -rf "$D"; mkdir -p "$D/src" "$D/bin"; TIMES=$D/build-times.txt; : >"$TIMES"
  cd "$D/src"
  go mod init local.invalid/etcdbins >/dev/null 2>&1
  run_ticking "etcd modules (go get -tool)" go get -tool "go.etcd.io/etcd/server/v3@$V" "go.etcd.io/etcd/etcdctl/v3@$V"
  run_ticking "etcd $V" go build -trimpath \
    -ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$V" -o "$D/bin/etcd" go.etcd.io/etcd/server/v3
  run_ticking "etcdctl $V" go build -trimpath \
    -ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$V" -o "$D/bin/etcdctl" go.etcd.io/etcd/etcdctl/v3
  "$D/bin/etcd" --version | head -1 >&2
  write_stamp "$D" "$id" $((SECONDS - t0))
}

build_kubernetes() {
  local KV=$KVC_K8S_VERSION D=$KVC_K8S_DIR id t0=$SECONDS
  local SV=v0.${KV#v1.} MINOR UP m goline godebug
  MINOR=$(echo "$KV" | cut -d. -f2)
  id=$(stamp_id kubernetes "$KV")
  if [ $FORCE = 0 ] && is_built "$D" "$id" "${K8S_BINS[@]}"; then log "kubernetes $KV: present in $D (skip)"; return 0; fi
  [ $CHECK = 1 ] && { log "kubernetes $KV: NOT built ($D)"; return 1; }
  rm -rf "$D"; mkdir -p "$D/src" "$D/bin"; TIMES=$D/build-times.txt; : >"$TIMES"
  cd "$D/src"
  go mod init local.invalid/k8sbins >/dev/null 2>&1
  log "reading the upstream go.mod of k8s.io/kubernetes@$KV (downloads the module zip)"
  UP=$(go mod download -json "k8s.io/kubernetes@$KV" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  [ -f "$UP" ] || { log "could not download k8s.io/kubernetes@$KV"; return 1; }
  # Every staging module (replace k8s.io/X => ./staging/src/k8s.io/X) gets its published v0.Y.Z.
  local n=0
  for m in $(sed -n 's#^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/.*#\1#p' "$UP"); do
    go mod edit -replace="$m=$m@$SV"; n=$((n + 1))
  done
  log "replaced $n staging modules with $SV"
  [ $n -gt 0 ] || { log "no staging replace lines found in $UP"; return 1; }
  goline=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$UP" | head -1)
  [ -n "$goline" ] && go mod edit -go="$goline"
  godebug=$(sed -n 's/^godebug \(.*\)$/\1/p' "$UP" | head -1)
  [ -n "$godebug" ] && go mod edit -godebug="$godebug"
  go mod edit -require="k8s.io/kubernetes@$KV"
  run_ticking "kubernetes modules (go get -tool)" go get -tool \
    "k8s.io/kubernetes/cmd/kube-apiserver@$KV" "k8s.io/kubernetes/cmd/kube-controller-manager@$KV" \
    "k8s.io/kubernetes/cmd/kube-scheduler@$KV" "k8s.io/kubernetes/cmd/kubectl@$KV" \
    "k8s.io/kubernetes/cmd/kubelet@$KV" "k8s.io/kubernetes/cmd/kube-proxy@$KV"
  local LDF="-s -w" kv
  for kv in "gitVersion=$KV" gitMajor=1 "gitMinor=$MINOR" gitTreeState=clean \
            "buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"; do
    LDF="$LDF -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
  done
  local b
  for b in "${K8S_BINS[@]}"; do
    run_ticking "$b $KV" go build -trimpath -tags=selinux,notest,grpcnotrace \
      -ldflags="$LDF" -o "$D/bin/$b" "k8s.io/kubernetes/cmd/$b"
  done
  "$D/bin/kube-apiserver" --version >&2
  "$D/bin/kubectl" version --client >&2 || true
  write_stamp "$D" "$id" $((SECONDS - t0))
}

build_kwok() {
  local V=$KVC_KWOK_VERSION D=$KVC_KWOK_DIR id t0=$SECONDS KW S f
  id=$(stamp_id kwok "$V")
  if [ $FORCE = 0 ] && is_built "$D" "$id" "${KWOK_BINS[@]}"; then log "kwok $V: present in $D (skip)"; return 0; fi
  [ $CHECK = 1 ] && { log "kwok $V: NOT built ($D)"; return 1; }
  rm -rf "$D"; mkdir -p "$D/bin" "$D/stages"; TIMES=$D/build-times.txt; : >"$TIMES"
  cd "$D"
  # kwok has no replace directives, so `go install pkg@version` works and keeps kwok's own graph
  # (it must never share a module graph with the Kubernetes wrapper); GOFLAGS is reset so nothing
  # but kwok's own go.mod decides its dependencies.
  run_ticking "kwok $V" env GOFLAGS=-buildvcs=false GOBIN="$D/bin" go install -trimpath \
    -ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$V" "sigs.k8s.io/kwok/cmd/kwok@$V"
  # The Stage objects the standalone kwok needs (--config), taken from the module cache.
  KW=$(GOFLAGS='' go mod download -json "sigs.k8s.io/kwok@$V" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
  S=$KW/kustomize/stage
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    [ -f "$S/$f" ] || { log "kwok stage file missing: $S/$f"; return 1; }
    cat "$S/$f"; echo '---'
  done >"$KVC_KWOK_STAGES"
  "$D/bin/kwok" --version >&2 || true
  write_stamp "$D" "$id" $((SECONDS - t0))
}

# go_install_tool NAME VERSION DIR PACKAGE BINS... [-- MORE_PACKAGES...]: `go install
# PACKAGE@VERSION` (and each of MORE_PACKAGES@VERSION, same module) into DIR/bin, in the tool's own
# module graph (GOFLAGS reset: nothing but its go.mod decides its dependencies), static
# (CGO_ENABLED=0) so that it also runs in an empty image. GO_TAGS (comma-separated build tags) is
# passed on and named in the stamp, so that other tags rebuild.
go_install_tool() {
  local name=$1 V=$2 D=$3 id t0=$SECONDS pkgs=("$4@$2") bins=(); shift 4
  while [ $# -gt 0 ] && [ "$1" != -- ]; do bins+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  local p; for p in "$@"; do pkgs+=("$p@$V"); done
  id=$(stamp_id "$name" "$V")${GO_TAGS:+-tags-$GO_TAGS}
  if [ $FORCE = 0 ] && is_built "$D" "$id" "${bins[@]}"; then log "$name $V: present in $D (skip)"; return 0; fi
  [ $CHECK = 1 ] && { log "$name $V: NOT built ($D)"; return 1; }
  rm -rf "$D"; mkdir -p "$D/bin"; TIMES=$D/build-times.txt; : >"$TIMES"
  cd "$D"
  run_ticking "$name $V" env GOFLAGS=-buildvcs=false GOBIN="$D/bin" go install -trimpath \
    ${GO_TAGS:+-tags="$GO_TAGS"} -ldflags="-s -w" "${pkgs[@]}"
  write_stamp "$D" "$id" $((SECONDS - t0))
}

build_coredns() {
  go_install_tool coredns "$KVC_COREDNS_VERSION" "$KVC_COREDNS_DIR" github.com/coredns/coredns "${COREDNS_BINS[@]}"
}

build_helm() {
  go_install_tool helm "$KVC_HELM_VERSION" "$KVC_HELM_DIR" helm.sh/helm/v3/cmd/helm "${HELM_BINS[@]}"
}

build_crictl() {
  go_install_tool crictl "$KVC_CRICTL_VERSION" "$KVC_CRICTL_DIR" sigs.k8s.io/cri-tools/cmd/crictl "${CRICTL_BINS[@]}"
}

build_kube-router() {
  go_install_tool kube-router "$KVC_KUBE_ROUTER_VERSION" "$KVC_KUBE_ROUTER_DIR" \
    github.com/cloudnativelabs/kube-router/v2/cmd/kube-router "${KUBE_ROUTER_BINS[@]}"
}

# Prometheus and promtool from one module version (one install, one graph), with Kubernetes
# service discovery only (Prometheus's own build tags: remove_all_sd, enable_kubernetes_sd): the
# other discoveries' cloud SDKs would double the build (149 MB of Go source instead of 70 MB; from
# a cold build cache 581 s of CPU instead of 311 s here).
# Without the builtinassets tag the web UI is left out: the API, the rules and the scraping are
# all there. Beside them, the Prometheus Operator's CRDs of the kinds the monitoring kit uses, from
# that project's Go module (its example/ directory): the API server validates the kit against them.
build_prometheus() {
  GO_TAGS=remove_all_sd,enable_kubernetes_sd \
    go_install_tool prometheus "$KVC_PROMETHEUS_VERSION" "$KVC_PROMETHEUS_DIR" \
    github.com/prometheus/prometheus/cmd/prometheus "${PROMETHEUS_BINS[@]}" \
    -- github.com/prometheus/prometheus/cmd/promtool
  local D=$KVC_PROMETHEUS_DIR/crds-$KVC_PROMETHEUS_OPERATOR_VERSION dir k
  [ -s "$D/monitoring.coreos.com_prometheusrules.yaml" ] && return 0
  [ $CHECK = 1 ] && { log "prometheus-operator CRDs $KVC_PROMETHEUS_OPERATOR_VERSION: NOT fetched ($D)"; return 1; }
  dir=$(cd "$KVC_PROMETHEUS_DIR" && go mod download -json \
    "github.com/prometheus-operator/prometheus-operator@$KVC_PROMETHEUS_OPERATOR_VERSION" | jq -r .Dir)
  mkdir -p "$D.tmp"
  for k in servicemonitors podmonitors prometheusrules; do
    cp "$dir/example/prometheus-operator-crd/monitoring.coreos.com_$k.yaml" "$D.tmp/"
  done
  rm -rf "$D" && mv "$D.tmp" "$D"
  log "prometheus-operator $KVC_PROMETHEUS_OPERATOR_VERSION CRDs in $D"
}

mkdir -p "$KVC_TOOLS_DIR"
command -v go >/dev/null || { log "go is not on PATH (Go >= 1.26 is needed)"; exit 1; }
if [ "$KVC_GOTOOLCHAIN" = local ]; then
  gv=$(go env GOVERSION); gm=${gv#go1.}; gm=${gm%%.*}
  if [ "${gm:-0}" -lt 26 ] 2>/dev/null; then
    log "Go $gv is too old: Kubernetes $KVC_K8S_VERSION needs Go >= 1.26 (or set KVC_GOTOOLCHAIN in versions.env)"
    exit 1
  fi
fi
TIMES=/dev/null
T0=$SECONDS
set +e
(
  set -e
  # One build at a time per cache directory (ctest's cluster.up and setup.sh may race).
  if [ $CHECK = 0 ]; then
    exec 9>"$KVC_TOOLS_DIR/.build.lock"
    flock 9
  fi
  for c in "${WANT[@]}"; do "build_$c"; done
)
rc=$?
set -e
if [ $CHECK = 0 ]; then
  if [ $rc -eq 0 ]; then log "all requested components ready ($((SECONDS - T0))s)"; else log "build FAILED"; fi
fi
exit $rc
