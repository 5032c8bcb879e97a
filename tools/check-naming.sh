#!/usr/bin/env bash
# Checks the project's naming (docs/contributing.md "Names") with clang-tidy's
# readability-identifier-naming, configured in .clang-tidy.
#
# Usage: tools/check-naming.sh [--fix] [BUILD_DIR]
#   BUILD_DIR   a configured build directory (its compile_commands.json); default build/
#   --fix       rename what breaks the convention, everywhere it is used
# Needs clang-tidy (Debian: apt-get install clang-tidy-14); the build and the tests do not.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fix=()
if [ "${1:-}" = --fix ]; then
  fix=(-fix)
  shift
fi
build=${1:-$root/build}
runner=$(command -v run-clang-tidy-14 || command -v run-clang-tidy || true)
[ -n "$runner" ] || { echo "check-naming: run-clang-tidy not found (apt-get install clang-tidy-14)" >&2; exit 2; }
[ -f "$build/compile_commands.json" ] || { echo "check-naming: $build/compile_commands.json missing: configure first (cmake -S . -B $build -G Ninja)" >&2; exit 2; }
out=$(mktemp)
"$runner" -p "$build" -quiet "${fix[@]}" -header-filter="$root/(src|test|bench)/" \
  -j "$(nproc)" "$root/(src|test|bench)/" >"$out" 2>&1 || true
# Left as they are: a third party's namespace (CLI), gtest's PrintTo hook, asio's tcp alias.
grep -E "invalid case style" "$out" | sed 's/\x1b\[[0-9;]*m//g' |
  grep -vE "namespace 'CLI'|function 'PrintTo'|type alias 'tcp'|template parameter 'expr-type'" |
  sort -u | tee "$out.names" || true
count=$(wc -l <"$out.names")
rm -f "$out" "$out.names"
if [ "$count" -gt 0 ]; then
  echo "check-naming: $count name(s) break the convention${fix:+ (fixed where clang-tidy could)}" >&2
  exit 1
fi
echo "check-naming: every name follows the convention"
