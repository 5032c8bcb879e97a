# shellcheck shell=bash
# Sourced by install.sh, store.sh and capture-fixtures.sh: the pinned Mooncake wheel and where its
# venv lives. The venv is outside the repository; override its root with KVC_CACHE_DIR, and the
# version with KVC_MOONCAKE_VERSION (the tests are written against the pinned one).
KVC_MOONCAKE_PACKAGE=mooncake-transfer-engine-non-cuda
KVC_MOONCAKE_VERSION=${KVC_MOONCAKE_VERSION:-0.3.13.post1}
KVC_CACHE_DIR=${KVC_CACHE_DIR:-${HOME:-/root}/.cache/kvcache-operator}
KVC_MOONCAKE_DIR=$KVC_CACHE_DIR/mooncake-$KVC_MOONCAKE_VERSION
KVC_MOONCAKE_VENV=$KVC_MOONCAKE_DIR/venv
# Debian runtime libraries the wheel's binaries link (found with ldd on mooncake_master,
# mooncake_client, store.so and engine.so): libibverbs is linked even for TCP.
KVC_MOONCAKE_APT_PACKAGES=(libibverbs1 ibverbs-providers libnuma1 libcurl4 curl)
