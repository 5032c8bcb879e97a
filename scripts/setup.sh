#!/usr/bin/env bash
# Installs everything this project needs on a fresh Debian machine, and nothing by hand:
#   1. the Debian packages in scripts/deps/apt-packages.txt (apt-get update first);
#   2. the real cluster built from Go modules (test/cluster/build.sh: the control plane, the
#      kubelet and kube-proxy of the real nodes, etcd, kwok, CoreDNS, crictl, Helm), into a cache
#      outside the repository — minutes the first time, seconds after (the images the nodes run
#      are built from these and from kvcache by images/build.sh, called by cluster.sh, run.sh and
#      the tests that need them);
#   3. the pinned Mooncake wheel in a venv outside the repository (test/store/install.sh).
#
# Usage: scripts/setup.sh [--packages-only]
# The cache lives in $KVC_CACHE_DIR (default ~/.cache/kvcache-operator); delete it to rebuild.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packages_only=false
[ "${1:-}" = "--packages-only" ] && packages_only=true

log() { printf '[setup %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

mapfile -t packages < <(grep -v '^[[:space:]]*#' "$root/scripts/deps/apt-packages.txt" | awk 'NF {print $1}' | sort -u)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  log "installing ${#missing[@]} Debian package(s): ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  log "Debian packages: all ${#packages[@]} present"
fi
$packages_only && exit 0

if [ -x "$root/test/cluster/build.sh" ]; then
  log "cluster binaries (kube-apiserver, kubelet, etcd, kwok, CoreDNS, crictl, Helm, …)"
  "$root/test/cluster/build.sh"
fi
if [ -x "$root/test/store/install.sh" ]; then
  log "Mooncake store (PyPI wheel in a venv)"
  "$root/test/store/install.sh"
fi
log "done"
