#!/usr/bin/env bash
# Every libFuzzer target of test/fuzz run long: 10,000,000 executions each from the seed corpus
# (test/fuzz/run.sh builds them and runs them, FUZZ_JOBS at a time). Prints a Markdown table
# (target, executions, wall and CPU seconds, executions per CPU second, coverage features found
# past the seeds, crashes) for docs/contributing.md, "Fuzzing"; reproducers of any crash are in
# BUILD_DIR/artifacts/. Executions per CPU second is the figure to compare: targets share cores.
#
# usage: bench/fuzz/run.sh [BUILD_DIR] [TARGET...]   (default BUILD_DIR: /tmp/kvc-fuzz-bench)
# environment:
#   FUZZ_RUNS         executions per target (default 10000000)
#   FUZZ_MAX_SECONDS  the most a target may run, wall time (default 0: until FUZZ_RUNS)
#   FUZZ_JOBS         targets run at once (default: the number of cores)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-/tmp/kvc-fuzz-bench}
[ $# -gt 0 ] && shift
runs=${FUZZ_RUNS:-10000000}
cap=${FUZZ_MAX_SECONDS:-0}
status=0
FUZZ_SECONDS=$cap FUZZ_JOBS=${FUZZ_JOBS:-$(nproc)} FUZZ_ARGS="-runs=$runs" \
  "$root/test/fuzz/run.sh" "$build" "$@" >"$build.out" 2>&1 || status=$?
mapfile -t targets < <(sed -n 's/^== \(fuzz_[a-z_]*\): .*/\1/p' "$build.out")
[ ${#targets[@]} -gt 0 ] || { cat "$build.out" >&2; exit 1; }

printf '| target | executions | wall s | CPU s | exec per CPU s | new coverage features | crashes |\n'
printf '|---|--:|--:|--:|--:|--:|--:|\n'
for target in "${targets[@]}"; do
  log=$build/$target.log
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  seconds=$(cat "$build/$target.seconds")
  cpu=$(cat "$build/$target.cpu")
  # Features ("ft:") when the seeds were loaded, and at the last status line.
  seeded=$(sed -n 's/.*INITED .* ft: \([0-9]*\).*/\1/p' "$log" | head -n 1)
  reached=$(grep -o ' ft: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*')
  crashes=$(find "$build/artifacts" -name "$target-*" | wc -l)
  note=
  [ "${executions:-0}" -lt "$runs" ] && [ "$crashes" -eq 0 ] && note=" (stopped at ${cap} s)"
  awk -v t="$target" -v n="${executions:-0}" -v s="$seconds" -v c="$cpu" -v a="${seeded:-0}" \
      -v b="${reached:-0}" -v k="$crashes" -v note="$note" \
      'BEGIN { printf "| %s | %d%s | %.0f | %.0f | %.0f | %d | %d |\n", t, n, note, s, c,
               (c > 0 ? n / c : 0), b - a, k }'
done
exit $status
