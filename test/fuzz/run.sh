#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time (FUZZ_SECONDS, 20 by
# default) from the small seed corpus kept in the repository. New inputs go to a scratch copy, so
# the repository's corpus stays small; a crash leaves its reproducer in the build directory.
#
# Usage: test/fuzz/run.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR}
seconds=${FUZZ_SECONDS:-20}
CC=clang CXX=clang++ cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
status=0
for target in fuzz_admission_review fuzz_inject; do
  seeds=$here/corpus/${target#fuzz_}
  scratch=$build/corpus-$target
  rm -rf "$scratch" && mkdir -p "$scratch" && cp "$seeds"/* "$scratch"/ 2>/dev/null || true
  echo "== $target: ${seconds}s"
  if ! (cd "$build" && "./$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
          -print_final_stats=1 "$scratch" 2>"$build/$target.log"); then
    status=1
    tail -n 40 "$build/$target.log"
  fi
  grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "$build/$target.log" | tail -n 2 || true
done
exit $status
