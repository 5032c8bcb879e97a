#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time (FUZZ_SECONDS, 10 by
# default) from the small seed corpus kept in the repository. New inputs go to a scratch copy, so
# the repository's corpus stays small; a crash leaves its reproducer in BUILD_DIR/artifacts/.
#
# Usage: test/fuzz/run.sh BUILD_DIR [TARGET...]    (default: every target, one after another)
# environment: FUZZ_SECONDS  seconds per target (default 10)
#              FUZZ_ARGS     extra libFuzzer flags (bench/fuzz/run.sh passes -runs=N)
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
status=0
mkdir -p "$build/artifacts"
for target in "${targets[@]}"; do
  seeds=$here/corpus/${target#fuzz_}
  scratch=$build/corpus-$target
  rm -rf "$scratch" "$build/artifacts/$target-"* && mkdir -p "$scratch"
  cp "$seeds"/* "$scratch"/ 2>/dev/null || true
  echo "== $target: ${seconds}s"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  if ! (cd "$build" && "./$target" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
          -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" \
          ${FUZZ_ARGS:-} "$scratch" 2>"$build/$target.log"); then
    status=1
    tail -n 40 "$build/$target.log"
  fi
  awk -v end="$(date +%s.%N)" -v start="$start" 'BEGIN { printf "%.1f\n", end - start }' \
    >"$build/$target.seconds"
  grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "$build/$target.log" | tail -n 2 || true
done
exit $status
