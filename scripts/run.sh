#!/usr/bin/env bash
# The main job on its embedded default: set up, build, then show what the admission webhook does
# to the example workloads — injected manifests, the explanation per container, and a refusal
# with its fix — using examples/inject/cluster.yaml as the cluster.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KVC_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh" --packages-only
cmake -S "$root" -B "$build" -G Ninja >/dev/null
cmake --build "$build" -j "$(nproc)" --target kvcache
kvcache=$build/src/cmd/kvcache
examples=$root/examples/inject

banner() { printf '\n=== %s\n\n' "$*"; }
banner "kvcache check-inject -f examples/inject/workloads.yaml --cluster examples/inject/cluster.yaml"
"$kvcache" check-inject -f "$examples/workloads.yaml" --cluster "$examples/cluster.yaml"
banner "kvcache inject -f examples/inject/workloads.yaml --cluster examples/inject/cluster.yaml"
"$kvcache" inject -f "$examples/workloads.yaml" --cluster "$examples/cluster.yaml"
banner "kvcache inject -f examples/inject/refused.yaml (exit 3: refused, nothing printed)"
set +e
"$kvcache" inject -f "$examples/refused.yaml" --cluster "$examples/cluster.yaml"
code=$?
set -e
echo "exit code: $code"
[ "$code" -eq 3 ]
