#!/usr/bin/env bash
# The project's layout (.clang-format), applied or checked with clang-format 14.
#
# Usage: tools/format.sh            rewrite every C++ file of src/, test/ and bench/ in place
#        tools/format.sh --check    list the files clang-format would change; exit 1 if any
# Needs clang-format-14 (scripts/setup.sh installs it; the test style.format runs --check).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
formatter=$(command -v clang-format-14 || true)
[ -n "$formatter" ] || { echo "format.sh: clang-format-14 not found (scripts/setup.sh installs it)" >&2; exit 2; }
mapfile -t files < <(cd "$root" && find src test bench -type f \( -name '*.cc' -o -name '*.h' \) | sort)
cd "$root"
if [ "${1:-}" = --check ]; then
  changed=()
  for f in "${files[@]}"; do
    "$formatter" --style=file "$f" | cmp -s - "$f" || changed+=("$f")
  done
  if [ ${#changed[@]} -gt 0 ]; then
    printf 'format.sh: clang-format would change %s (run tools/format.sh):\n' "${#changed[@]}" >&2
    printf '  %s\n' "${changed[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files follow .clang-format"
  exit 0
fi
"$formatter" --style=file -i "${files[@]}"
