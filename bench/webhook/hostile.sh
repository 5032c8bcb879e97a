#!/usr/bin/env bash
# The webhook server under hostile callers (docs/webhook.md#hostile-callers): bench_webhook_server
# (the operator's server, limits and mutating handler) attacked by bench/webhook/hostile_client.py
# on this machine (from 127.0.0.1), one attack after another and then all at once, while a caller
# that should be served (the API server: another address, 127.0.0.2, and another process) POSTs
# small reviews ten times a second. Prints, per phase, what the attack was answered,
# how many of the small reviews were served, and the server's peak RSS (VmHWM, sampled from
# /proc/<pid>/status), against the bound the header comment of http_server.h states.
#
# Usage: bench/webhook/hostile.sh [BUILD_DIR] [SECONDS_PER_PHASE]   (needs openssl, python3)
set -euo pipefail
# shellcheck source=server_lib.sh
. "$(dirname "$0")/server_lib.sh"
build=${1:-$root/build}
seconds=${2:-20}
start_bench_server "$build"
client=(python3 "$root/bench/webhook/hostile_client.py" --host 127.0.0.1 --port "$port")

kib() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$pid/status"; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

"${client[@]}" --seconds 3 --normal 1 >/dev/null 2>&1  # warm: first requests, allocator arenas
baseline=$(kib VmRSS)
printf 'baseline RSS after warm-up: %s MiB\n\n' "$(mib "$baseline")"
printf '%-34s %10s %10s  %s\n' phase "peak RSS" "RSS after" "the served caller's answers"
phase() {  # phase NAME CLIENT-ARGS...
  local name=$1 peak=0 rss
  shift
  "${client[@]}" --seconds "$seconds" "$@" >"$work/out" 2>/dev/null &
  local client_pid=$!
  "${client[@]}" --seconds "$seconds" --normal 1 --source 127.0.0.2 >"$work/normal" 2>/dev/null &
  local normal_pid=$!
  while kill -0 "$client_pid" 2>/dev/null; do
    rss=$(kib VmRSS)
    [ "$rss" -gt "$peak" ] && peak=$rss
    sleep 0.1
  done
  wait "$client_pid" "$normal_pid" || true
  sleep 1
  printf '%-34s %6s MiB %6s MiB  %s\n' "$name" "$(mib "$peak")" "$(mib "$(kib VmRSS)")" \
    "$(jq -r '[to_entries[] | select(.key | startswith("normal:")) | "\(.key | sub("normal:"; ""))=\(.value)"] | join(" ")' "$work/normal")"
  printf '%-34s %s\n' "" "attack answered: $(cat "$work/out")"
}
phase "idle flood (600 connections)" --idle 500 --idle-tls 100
phase "slow headers (200 connections)" --slow-header 200
phase "near-limit bodies held (40)" --big 40
phase "near-limit reviews parsed (4)" --parse 4
phase "100,000-deep reviews (4)" --deep 4
phase "all at once" --idle 300 --idle-tls 50 --slow-header 50 --big 40 --parse 4 --deep 4
printf '\npeak RSS of the process (VmHWM): %s MiB, %s MiB above the warm baseline\n' \
  "$(mib "$(kib VmHWM)")" "$(mib $(($(kib VmHWM) - baseline)))"
printf 'refusals logged one by one: %s, summary lines: %s, crashes: none (pid %s alive)\n' \
  "$(grep -c '] http server .*: refused ' "$work/server.log" || true)" \
  "$(grep -c 'more refusals in the last second' "$work/server.log" || true)" "$pid"
