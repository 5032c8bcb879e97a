#!/usr/bin/env bash
# Every libFuzzer target of test/fuzz run long: 10,000,000 executions each from the seed corpus
# (test/fuzz/run.sh builds and runs them, one after another), or FUZZ_MAX_SECONDS when a target is
# slower than that — the table then says it stopped short. Prints a Markdown table (target,
# executions, seconds, exec/s, coverage features found past the seeds, crashes) for
# docs/contributing.md, "Fuzzing"; reproducers of any crash are in BUILD_DIR/artifacts/.
#
# usage: bench/fuzz/run.sh [BUILD_DIR] [TARGET...]   (default BUILD_DIR: /tmp/kvc-fuzz-bench)
# environment:
#   FUZZ_RUNS         executions per target (default 10000000)
#   FUZZ_MAX_SECONDS  the most a target may run (default 480)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-/tmp/kvc-fuzz-bench}
[ $# -gt 0 ] && shift
runs=${FUZZ_RUNS:-10000000}
cap=${FUZZ_MAX_SECONDS:-480}
status=0
FUZZ_SECONDS=$cap FUZZ_ARGS="-runs=$runs" "$root/test/fuzz/run.sh" "$build" "$@" \
  >"$build.out" 2>&1 || status=$?
mapfile -t targets < <(sed -n 's/^== \(fuzz_[a-z_]*\): .*/\1/p' "$build.out")
[ ${#targets[@]} -gt 0 ] || { cat "$build.out" >&2; exit 1; }

printf '| target | executions | seconds | exec/s | new coverage features | crashes |\n'
printf '|---|--:|--:|--:|--:|--:|\n'
for target in "${targets[@]}"; do
  log=$build/$target.log
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  seconds=$(cat "$build/$target.seconds")
  # Features ("ft:") when the seeds were loaded, and at the last status line.
  seeded=$(sed -n 's/.*INITED .* ft: \([0-9]*\).*/\1/p' "$log" | head -n 1)
  reached=$(grep -o ' ft: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*')
  crashes=$(find "$build/artifacts" -name "$target-*" | wc -l)
  note=
  [ "${executions:-0}" -lt "$runs" ] && [ "$crashes" -eq 0 ] && note=" (stopped at ${cap} s)"
  awk -v t="$target" -v n="${executions:-0}" -v s="$seconds" -v a="${seeded:-0}" \
      -v b="${reached:-0}" -v c="$crashes" -v note="$note" \
      'BEGIN { printf "| %s | %d%s | %.0f | %.0f | %d | %d |\n", t, n, note, s, (s > 0 ? n / s : 0), b - a, c }'
done
exit $status
