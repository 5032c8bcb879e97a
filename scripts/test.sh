#!/usr/bin/env bash
# Sets up a fresh machine, builds everything and runs ALL tests: unit, golden and integration
# (a real kube-apiserver/etcd/kcm/scheduler/kwok and a real Mooncake master on 127.0.0.1).
#
# Usage: scripts/test.sh [extra ctest arguments, e.g. -L unit or -R golden]
# KVC_BUILD_DIR (default build/) is where CMake builds. KVC_SKIP_INTEGRATION=1 is a developer's
# explicit opt-out: integration tests then report SKIPPED; CI never sets it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KVC_BUILD_DIR:-$root/build}

if [ "${KVC_SKIP_INTEGRATION:-0}" = 1 ]; then
  "$root/scripts/setup.sh" --packages-only
else
  "$root/scripts/setup.sh"
fi
cmake -S "$root" -B "$build" -G Ninja
cmake --build "$build" -j "$(nproc)"
cd "$build"
ctest --output-on-failure --no-tests=error "$@"
