#!/usr/bin/env bash
# Builds the project's images with no daemon and no registry, the same images the Containerfiles
# beside this script describe:
#   pause     the Pod sandbox of the real nodes (a static binary of pause/pause.c)
#   coredns   cluster DNS (the binary test/cluster/build.sh builds from its Go module)
#   operator  kvcache on Debian's runtime libraries (operator/packages.txt), uid 65532
#   store     the pinned Mooncake wheel's venv at /opt/mooncake + kvcache, uid 65532
#   upstream  a stand-in for a published upstream store image (kvcacheai/mooncake): the same venv
#             and packages, none of our binaries (issue 27 §3's test; never installed)
#   noshell   a store image variant without a shell: kvcache on the operator's packages, tagged in
#             the store's repository (the Troubleshooting row MemberInitCrashLooping; never installed)
#   prometheus  Prometheus and promtool (built by test/cluster/build.sh from their Go module) in an
#             empty image: the monitoring kit's check (test/monitoring; never installed)
# How: a Debian root filesystem from Debian's packages (mmdebstrap, extract variant, cached by its
# package list), our files added as layers of an OCI layout (umoci), converted to an archive that
# containerd imports (skopeo). Each archive is cached by the hash of everything it is made of and
# rebuilt only when one of those inputs changes.
#
# usage: images/build.sh [--kvcache BIN] [--check] [pause|coredns|operator|store|upstream|noshell|prometheus ...]
#   --kvcache BIN  the kvcache binary to pack (default: $KVC_BUILD_DIR/src/cmd/kvcache,
#                  KVC_BUILD_DIR defaulting to ./build); it is stripped on the way in
#   --check        exit 0 if every requested image is built for today's inputs, 1 otherwise
# Prints, for each image, KVC_IMAGE_<NAME>=<reference>, KVC_IMAGE_<NAME>_PINNED=<reference>-<content
# key> (the same image under a tag that names this build) and KVC_IMAGE_<NAME>_ARCHIVE=<path>, and
# writes the same lines to $KVC_CACHE_DIR/images/<name>.env (test/cluster/cluster.sh reads them).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=../test/cluster/paths.sh
. "$ROOT/test/cluster/paths.sh"
# shellcheck source=../test/store/paths.sh
. "$ROOT/test/store/paths.sh"
KVC_PROJECT_VERSION=$(sed -n 's/^project(kvcache-operator VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
# shellcheck source=versions.env
. "$HERE/versions.env"
IMAGES_DIR=$KVC_CACHE_DIR/images

log() { printf '[images %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

KVCACHE="" CHECK=0 WANT=()
while [ $# -gt 0 ]; do
  case $1 in
    --kvcache) shift; KVCACHE=${1:?--kvcache needs a path} ;;
    --kvcache=*) KVCACHE=${1#--kvcache=} ;;
    --check) CHECK=1 ;;
    pause|coredns|operator|store|upstream|noshell|prometheus) WANT+=("$1") ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift
done
[ ${#WANT[@]} -gt 0 ] || WANT=(pause coredns operator store)
[ -n "$KVCACHE" ] || KVCACHE=${KVC_BUILD_DIR:-$ROOT/build}/src/cmd/kvcache

need() { command -v "$1" >/dev/null 2>&1 || die "'$1' is missing (scripts/setup.sh installs it: apt-get install $2)"; }

# packages FILE...: the package names of list files (comments and blank lines dropped).
packages() { grep -hv '^[[:space:]]*#' "$@" | awk 'NF {print $1}' | sort -u; }

sha() { sha256sum | cut -c1-16; }

# The inputs of each image, hashed into its cache key: recipe, package lists, files packed.
key_of() {
  local name=$1
  {
    echo "recipe=$KVC_IMAGE_RECIPE suite=$KVC_IMAGE_SUITE ref=$(ref_of "$name")"
    sed -n '/^build_image()/,/^}/p;/^add_'"$name"'()/,/^}/p' "$0"
    case $name in
      pause) cat "$HERE/pause/pause.c" ;;
      coredns) sha256sum <"$KVC_COREDNS_BIN/coredns" ;;
      prometheus) cat "$KVC_PROMETHEUS_BIN/prometheus" "$KVC_PROMETHEUS_BIN/promtool" | sha256sum ;;
      operator|noshell) packages "$HERE/operator/packages.txt"; sha256sum <"$KVCACHE" ;;
      store) packages "$HERE/operator/packages.txt" "$HERE/store/packages.txt"; sha256sum <"$KVCACHE"
             sed -n '/^add_venv()/,/^}/p' "$0"; cat "$KVC_MOONCAKE_DIR/.stamp" ;;
      upstream) packages "$HERE/operator/packages.txt" "$HERE/store/packages.txt"
                sed -n '/^add_venv()/,/^}/p' "$0"; cat "$KVC_MOONCAKE_DIR/.stamp" ;;
    esac
  } | sha
}

ref_of() {
  case $1 in
    pause) echo "$KVC_PAUSE_IMAGE" ;; coredns) echo "$KVC_COREDNS_IMAGE" ;;
    operator) echo "$KVC_OPERATOR_IMAGE" ;; store) echo "$KVC_STORE_IMAGE" ;;
    upstream) echo "$KVC_UPSTREAM_STORE_IMAGE" ;; noshell) echo "$KVC_NOSHELL_STORE_IMAGE" ;;
    prometheus) echo "$KVC_PROMETHEUS_IMAGE" ;;
  esac
}

base_packages() {
  case $1 in
    operator|noshell) packages "$HERE/operator/packages.txt" ;;
    store|upstream) packages "$HERE/operator/packages.txt" "$HERE/store/packages.txt" ;;
  esac
}

# base_layout NAME: an OCI layout whose tag "base" is the Debian root filesystem of NAME's package
# list (cached under $IMAGES_DIR/base/<hash of the list>); prints its path. Scratch images: empty.
base_layout() {
  local name=$1 list key L R t0=$SECONDS
  list=$(base_packages "$name" | tr '\n' ',')
  key=$(echo "recipe=$KVC_IMAGE_RECIPE suite=$KVC_IMAGE_SUITE packages=$list" | sha)
  L=$IMAGES_DIR/base/$key
  if [ -f "$L/.complete" ]; then echo "$L"; return 0; fi
  rm -rf "$L"; mkdir -p "$(dirname "$L")"
  R=$(mktemp -d "$IMAGES_DIR/tmp.rootfs.XXXXXX")
  if [ -n "$list" ]; then
    log "$name: Debian $KVC_IMAGE_SUITE root filesystem from ${list%,} (mmdebstrap)"
    mmdebstrap --quiet --variant=extract --mode=root --include="${list%,}" \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
      "$KVC_IMAGE_SUITE" "$R" "$KVC_IMAGE_MIRROR" >&2 || die "mmdebstrap failed for $name"
    rm -rf "$R/var/lib/apt/lists" "$R/var/cache/apt" "$R/var/log"/* "$R/dev"/*
    mkdir -p "$R/etc" "$R/tmp" && chmod 1777 "$R/tmp"
    # The extract variant configures nothing, so the accounts are written here: root and the
    # unprivileged user the images run as (65532, the published store image's uid).
    printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin\n' >"$R/etc/passwd"
    printf 'root:x:0:\nnonroot:x:65532:\n' >"$R/etc/group"
    mkdir -p "$R/home/nonroot" && chown 65532:65532 "$R/home/nonroot"
  fi
  umoci init --layout "$L" >&2
  umoci new --image "$L:base" >&2
  if [ -n "$list" ]; then
    umoci insert --image "$L:base" --history.comment "Debian $KVC_IMAGE_SUITE: ${list%,}" "$R" / >&2
  fi
  rm -rf "$R"
  touch "$L/.complete"
  log "$name: base layer ready in $((SECONDS - t0))s ($(du -sh "$L" | cut -f1))"
  echo "$L"
}

# add_<name> LAYOUT STAGE: fill STAGE with the files of NAME's top layer; set its configuration.
add_pause() {
  local L=$1 S=$2
  need gcc build-essential
  gcc -static -Os -s -o "$S/pause" "$HERE/pause/pause.c"
  umoci insert --image "$L:img" "$S/pause" /pause >&2
  umoci config --image "$L:img" --config.user=65535:65535 --config.entrypoint=/pause >&2
}

add_coredns() {
  local L=$1
  [ -x "$KVC_COREDNS_BIN/coredns" ] || die "coredns is not built ($KVC_COREDNS_BIN; run test/cluster/build.sh coredns)"
  umoci insert --image "$L:img" "$KVC_COREDNS_BIN/coredns" /coredns >&2
  umoci config --image "$L:img" --config.user=65532:65532 --config.entrypoint=/coredns \
    --config.exposedports=53/tcp --config.exposedports=53/udp >&2
}

add_prometheus() {
  local L=$1 b
  for b in prometheus promtool; do
    [ -x "$KVC_PROMETHEUS_BIN/$b" ] || die "$b is not built ($KVC_PROMETHEUS_BIN; run test/cluster/build.sh prometheus)"
    umoci insert --image "$L:img" "$KVC_PROMETHEUS_BIN/$b" "/bin/$b" >&2
  done
  umoci config --image "$L:img" --config.user=65534:65534 --config.entrypoint=/bin/prometheus \
    --config.workingdir=/prometheus --config.exposedports=9090/tcp >&2
}

add_operator() {
  local L=$1 S=$2
  strip -o "$S/kvcache" "$KVCACHE"
  umoci insert --image "$L:img" "$S/kvcache" /usr/local/bin/kvcache >&2
  umoci config --image "$L:img" --config.user=65532:65532 \
    --config.entrypoint=/usr/local/bin/kvcache --config.cmd=operator \
    --config.exposedports=9443/tcp --config.exposedports=8080/tcp >&2
}

# The venv test/store/install.sh made from the pinned PyPI wheel, relocated to /opt/mooncake:
# pip and setuptools dropped (nothing installs at run time), shebangs and pyvenv.cfg rewritten.
add_venv() {
  local L=$1 S=$2 V=$KVC_MOONCAKE_VENV f
  [ -x "$V/bin/mooncake_master" ] || die "the Mooncake venv is missing ($V; run test/store/install.sh)"
  mkdir -p "$S/opt"
  tar -C "$(dirname "$V")" --exclude='__pycache__' --exclude='site-packages/pip' \
    --exclude='site-packages/pip-*' --exclude='site-packages/setuptools*' \
    --exclude='site-packages/pkg_resources' --exclude='site-packages/_distutils_hack' \
    --exclude='site-packages/distutils-precedence.pth' --exclude='bin/activate*' \
    --exclude='bin/pip*' --exclude='bin/Activate.ps1' -cf - "$(basename "$V")" | tar -C "$S/opt" -xf -
  mv "$S/opt/$(basename "$V")" "$S/opt/mooncake"
  printf 'home = /usr/bin\ninclude-system-site-packages = false\nversion = %s\n' \
    "$(sed -n 's/^version = //p' "$V/pyvenv.cfg")" >"$S/opt/mooncake/pyvenv.cfg"
  for f in "$S"/opt/mooncake/bin/*; do
    [ -L "$f" ] || sed -i "1s|^#!$V/bin/|#!/opt/mooncake/bin/|" "$f"
  done
  umoci insert --image "$L:img" "$S/opt/mooncake" /opt/mooncake >&2
  umoci config --image "$L:img" --config.user=65532:65532 \
    --config.env=PATH=/opt/mooncake/bin:/usr/local/bin:/usr/bin:/bin \
    --config.exposedports=50051/tcp --config.exposedports=9003/tcp >&2
}

add_store() {
  local L=$1 S=$2
  add_venv "$L" "$S"
  strip -o "$S/kvcache" "$KVCACHE"
  umoci insert --image "$L:img" "$S/kvcache" /usr/local/bin/kvcache >&2
}

# Mooncake's processes and nothing of ours, as a published image has them.
add_upstream() { add_venv "$1" "$2"; }

# kvcache and no shell (the operator's packages have none), as a store image built without one.
add_noshell() {
  local L=$1 S=$2
  strip -o "$S/kvcache" "$KVCACHE"
  umoci insert --image "$L:img" "$S/kvcache" /usr/local/bin/kvcache >&2
  umoci config --image "$L:img" --config.user=65532:65532 >&2
}

# The binary's libraries all come from the image's package list (else it would not start there).
check_links() {
  local lib path pkg listed missing=()
  listed=" $(base_packages "$1" | tr '\n' ' ') "
  for lib in $(objdump -p "$KVCACHE" | awk '/NEEDED/ {print $2}'); do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l && !f {print $NF; f = 1}')
    pkg=""
    if [ -n "$path" ]; then
      # dpkg knows a file by the path its package ships (/lib/... or /usr/lib/... on a merged /usr).
      local real; real=$(readlink -f "$path")
      pkg=$(dpkg -S "$(dirname "$path")/$(basename "$real")" "$real" 2>/dev/null | cut -d: -f1 | head -1 || true)
    fi
    [ -n "$pkg" ] && [[ "$listed" == *" $pkg "* ]] || missing+=("$lib (${pkg:-no package})")
  done
  [ ${#missing[@]} -eq 0 ] || die "$KVCACHE links ${missing[*]}, which images/operator/packages.txt does not list"
}

build_image() {
  local name=$1 key archive ref L W t0=$SECONDS
  ref=$(ref_of "$name")
  key=$(key_of "$name")
  archive=$IMAGES_DIR/$name-$key.tar
  if [ -s "$archive" ]; then
    log "$name: $ref cached ($(basename "$archive"))"
  elif [ $CHECK = 1 ]; then
    log "$name: NOT built for today's inputs"; return 1
  else
    case $name in operator|store|noshell) check_links "$name" ;; esac
    L=$(base_layout "$name")
    W=$(mktemp -d "$IMAGES_DIR/tmp.$name.XXXXXX")
    cp -a "$L" "$W/layout"; mkdir "$W/stage"
    umoci tag --image "$W/layout:base" img >&2
    "add_$name" "$W/layout" "$W/stage"
    umoci config --image "$W/layout:img" --author=kvcache-operator --os=linux --architecture=amd64 \
      --config.label=org.opencontainers.image.title="$name" \
      --config.label=org.opencontainers.image.version="${ref##*:}" >&2
    # Also tagged with the content key, so that an install can pin exactly this build.
    skopeo copy --quiet --additional-tag "$ref-$key" "oci:$W/layout:img" "docker-archive:$W/image.tar:$ref" >&2
    rm -f "$IMAGES_DIR/$name"-*.tar
    mv "$W/image.tar" "$archive"
    rm -rf "$W"
    log "$name: built $ref in $((SECONDS - t0))s ($(du -h "$archive" | cut -f1))"
  fi
  local var=KVC_IMAGE_${name^^} lines
  lines=$(printf '%s=%s\n%s_PINNED=%s\n%s_ARCHIVE=%s\n' "$var" "$ref" "$var" "$ref-$key" "$var" "$archive")
  echo "$lines"
  [ $CHECK = 1 ] || echo "$lines" >"$IMAGES_DIR/$name.env"
}

if [ $CHECK = 0 ]; then
  need mmdebstrap mmdebstrap; need umoci umoci; need skopeo skopeo; need strip binutils
  case " ${WANT[*]} " in *" operator "*|*" store "*|*" noshell "*)
    [ -x "$KVCACHE" ] || die "no kvcache binary at $KVCACHE (build it, or pass --kvcache)" ;;
  esac
  mkdir -p "$IMAGES_DIR"
  exec 9>"$IMAGES_DIR/.build.lock"
  flock 9
  rm -rf "$IMAGES_DIR"/tmp.*
fi
for name in "${WANT[@]}"; do build_image "$name"; done
