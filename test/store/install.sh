#!/usr/bin/env bash
# Installs the pinned Mooncake wheel (mooncake-transfer-engine-non-cuda, see paths.sh) into a venv
# outside the repository, ${KVC_CACHE_DIR:-$HOME/.cache/kvcache-operator}/mooncake-<version>/venv,
# plus the Debian runtime libraries its binaries link. Idempotent: a venv whose stamp and binaries
# check out is left alone.
#
# usage: install.sh [--check] [--force] [--version V]
#   --check     exit 0 if the venv is installed and its binaries load, else 1 (installs nothing)
#   --force     reinstall the venv even when it is present
#   --version   another wheel version (e.g. 0.3.12.post1, for capture-fixtures.sh); also
#               KVC_MOONCAKE_VERSION
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

CHECK=0 FORCE=0
while [ $# -gt 0 ]; do
  case $1 in
    --check) CHECK=1 ;;
    --force) FORCE=1 ;;
    --version) shift; export KVC_MOONCAKE_VERSION=${1:?--version needs a value} ;;
    --version=*) export KVC_MOONCAKE_VERSION=${1#--version=} ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
# shellcheck source=paths.sh
. "$HERE/paths.sh"

log() { printf '[store-install %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

STAMP=$KVC_MOONCAKE_DIR/.stamp
STAMP_ID="$KVC_MOONCAKE_PACKAGE==$KVC_MOONCAKE_VERSION"
PKG_DIR() {
  "$KVC_MOONCAKE_VENV/bin/python" -c \
    'import mooncake, os; print(os.path.dirname(mooncake.__file__))'
}
# Extra library directories the binaries need (written by this script, read by store.sh).
LIBPATH_FILE=$KVC_MOONCAKE_DIR/ld-library-path
extra_libpath() { [ -f "$LIBPATH_FILE" ] && cat "$LIBPATH_FILE" || true; }

missing_apt_packages() {
  local p out=()
  for p in "${KVC_MOONCAKE_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || out+=("$p")
  done
  echo "${out[@]}"
}

# Every shared object of the wheel's binaries resolves (ldd prints "not found" otherwise).
binaries_load() {
  local dir f
  dir=$(PKG_DIR 2>/dev/null) || return 1
  for f in mooncake_master mooncake_client store.so engine.so; do
    [ -e "$dir/$f" ] || return 1
    if LD_LIBRARY_PATH=$(extra_libpath) ldd "$dir/$f" 2>&1 | grep 'not found' >/dev/null; then
      return 1
    fi
  done
}

is_installed() {
  [ -f "$STAMP" ] && grep -qx "id=$STAMP_ID" "$STAMP" || return 1
  [ -x "$KVC_MOONCAKE_VENV/bin/mooncake_master" ] || return 1
  [ -x "$KVC_MOONCAKE_VENV/bin/mooncake_client" ] || return 1
  [ -z "$(missing_apt_packages)" ] || return 1
  binaries_load
}

if [ $CHECK = 1 ]; then
  if is_installed; then
    log "$STAMP_ID is installed in $KVC_MOONCAKE_VENV"
    exit 0
  fi
  log "$STAMP_ID is not (completely) installed in $KVC_MOONCAKE_VENV"
  exit 1
fi

if [ $FORCE = 0 ] && is_installed; then
  log "$STAMP_ID already installed in $KVC_MOONCAKE_VENV; skipping"
  exit 0
fi

# 1. Debian runtime libraries.
missing=$(missing_apt_packages)
if [ -n "$missing" ]; then
  log "installing Debian packages: $missing"
  [ "$(id -u)" = 0 ] || die "need root to apt-get install: $missing"
  # shellcheck disable=SC2086
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing \
      >&2; then
    log "apt-get install failed; refreshing the package lists once"
    apt-get update -q >&2
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >&2
  fi
else
  log "Debian runtime libraries present: ${KVC_MOONCAKE_APT_PACKAGES[*]}"
fi

# 2. The venv. Debian's python3 (python3-venv) when it has the venv module, else python3 on PATH.
PY=
for cand in /usr/bin/python3 python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import venv, ensurepip' 2>/dev/null; then
    PY=$cand
    break
  fi
done
[ -n "$PY" ] || die "no python3 with the venv module (apt-get install python3-venv)"

if [ $FORCE = 1 ] || ! is_installed; then
  log "creating venv $KVC_MOONCAKE_VENV with $($PY --version 2>&1)"
  rm -rf "$KVC_MOONCAKE_VENV" "$STAMP"
  mkdir -p "$KVC_MOONCAKE_DIR"
  "$PY" -m venv "$KVC_MOONCAKE_VENV"
  log "pip install $STAMP_ID (PyPI)"
  start=$(date +%s)
  "$KVC_MOONCAKE_VENV/bin/pip" install --disable-pip-version-check --no-input -q "$STAMP_ID" >&2
  log "pip install took $(( $(date +%s) - start ))s"
  rm -f "$LIBPATH_FILE"
fi

# Some "non-cuda" wheels (0.3.12.post1) still link libcudart.so.12. The CUDA runtime library from
# PyPI (nvidia-cuda-runtime-cu12) satisfies the loader; no GPU is touched on the TCP path.
dir=$(PKG_DIR)
deps=$(ldd "$dir/mooncake_master" "$dir/mooncake_client" 2>&1 || true)
if grep -q 'libcudart.so.12 => not found' <<<"$deps"; then
  log "the wheel links libcudart.so.12: pip install nvidia-cuda-runtime-cu12 into the venv"
  "$KVC_MOONCAKE_VENV/bin/pip" install --disable-pip-version-check --no-input -q \
    nvidia-cuda-runtime-cu12 >&2
  "$KVC_MOONCAKE_VENV/bin/python" -c \
    'import nvidia.cuda_runtime as r, os; print(os.path.join(list(r.__path__)[0], "lib"))' \
    > "$LIBPATH_FILE"
fi

# 3. Verify: the binaries load and report the pinned version.
binaries_load || die "the wheel's binaries do not load; ldd $(PKG_DIR)/mooncake_master"
line=$(LD_LIBRARY_PATH=$(extra_libpath) "$KVC_MOONCAKE_VENV/bin/mooncake_master" --version 2>&1 \
  | head -n1)
case $line in
  *"version $KVC_MOONCAKE_VERSION "*) ;;
  *) die "mooncake_master reports '$line', expected version $KVC_MOONCAKE_VERSION" ;;
esac
{ echo "id=$STAMP_ID"
  echo "installed=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "master=$line"
} > "$STAMP"
log "installed: $line ($KVC_MOONCAKE_VENV)"
