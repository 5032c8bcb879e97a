#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time (FUZZ_SECONDS, 10 by
# default) from the small seed corpus kept in the repository. New inputs go to a scratch copy, so
# the repository's corpus stays small; a crash leaves its reproducer in BUILD_DIR/artifacts/.
#
# Usage: test/fuzz/run.sh BUILD_DIR [TARGET...]    (default: every target)
# environment: FUZZ_SECONDS  seconds per target (default 10; 0: no limit)
#              FUZZ_ARGS     extra libFuzzer flags (bench/fuzz/run.sh passes -runs=N)
#              FUZZ_JOBS     targets run at once (default 1)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: run.sh BUILD_DIR [TARGET...]}
shift
seconds=${FUZZ_SECONDS:-10}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_admission_review fuzz_validation fuzz_inject fuzz_metrics fuzz_segments
           fuzz_ledger fuzz_tenant_quota_policy fuzz_kubeconfig fuzz_yaml fuzz_manifest fuzz_watch)
fi
# Inputs as large as the webhook server accepts: its body limit, read from the code
# (src/webhook/server.cc, defaultServerOptions: max_body_bytes = kMaxReviewBytes, defined in
# kvc/webhook/admission.h as 8 * 1024 * 1024, i.e. 8 MiB), so that nothing the server would hand
# to a decoder is out of the fuzzers' reach. The limit is a number or one named constant.
limit_expr=$(sed -n 's/.*options\.max_body_bytes = \([0-9A-Za-z_ *]*\);.*/\1/p' \
  "$root/src/webhook/server.cc")
if [[ $limit_expr =~ ^k[A-Za-z0-9_]+$ ]]; then
  limit_expr=$(grep -rhs "constexpr std::size_t $limit_expr = " "$root/src/webhook" |
                 sed -n 's/.* = \([0-9 *]*\);.*/\1/p' | head -n 1)
fi
[[ $limit_expr =~ ^[0-9][0-9\ *]*$ ]] ||
  { echo "run.sh: no max_body_bytes in src/webhook/server.cc" >&2; exit 2; }
max_len=$((limit_expr))
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >/dev/null
mkdir -p "$build/artifacts"
# One target: fresh scratch corpus, its log, its wall seconds (.seconds) and the CPU seconds its
# process used (.cpu: user + system; the figure that means something when targets share cores).
run_target() {
  local target=$1 seeds=$here/corpus/${1#fuzz_} scratch=$build/corpus-$1 start status=0
  rm -rf "$scratch" "$build/artifacts/$target-"* && mkdir -p "$scratch"
  cp "$seeds"/* "$scratch"/ 2>/dev/null || true
  echo "== $target: ${seconds}s"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  (cd "$build" && rc=0 && "./$target" -max_total_time="$seconds" -max_len="$max_len" \
     -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
     -artifact_prefix="$build/artifacts/$target-" ${FUZZ_ARGS:-} "$scratch" \
     2>"$build/$target.log" || rc=$?
   times >"$build/$target.times"
   exit $rc) || status=1
  awk -v end="$(date +%s.%N)" -v start="$start" 'BEGIN { printf "%.1f\n", end - start }' \
    >"$build/$target.seconds"
  # `times`, second line: the children's user and system time, as "XmY.YYYs XmY.YYYs".
  sed -n 2p "$build/$target.times" | tr 'ms' '  ' |
    awk '{ printf "%.1f\n", $1 * 60 + $2 + $3 * 60 + $4 }' >"$build/$target.cpu"
  if [ $status -ne 0 ]; then
    tail -n 40 "$build/$target.log"
  fi
  grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "$build/$target.log" | tail -n 2 || true
  return $status
}
# FUZZ_JOBS targets at a time (1 by default: the bounded run in the test command stays serial).
status=0
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "${FUZZ_JOBS:-1}" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  run_target "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
