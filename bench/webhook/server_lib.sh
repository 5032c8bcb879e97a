# shellcheck shell=bash
# What the server-alone webhook benches share (run.sh, hostile.sh): bench_webhook_server on
# 127.0.0.1 with a throwaway certificate, stopped and cleaned up at exit.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# start_bench_server BUILD_DIR: builds bench_webhook_server when missing, starts it (2 threads)
# with the inject example's cluster and a fresh certificate for 127.0.0.1; sets $work (a scratch
# directory, removed at exit), $pid, $port, and leaves the server's output in $work/server.log
# (its first line is the port).
start_bench_server() {
  local server=$1/bench/webhook/bench_webhook_server
  [ -x "$server" ] || cmake --build "$1" --target bench_webhook_server
  work=$(mktemp -d)
  trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bench \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$work/tls.key" -out "$work/tls.crt" 2>/dev/null
  "$server" "$root/examples/inject/cluster.yaml" "$work/tls.crt" "$work/tls.key" 2 \
    >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do [ -s "$work/server.log" ] && break; sleep 0.1; done
  port=$(head -1 "$work/server.log")
}
