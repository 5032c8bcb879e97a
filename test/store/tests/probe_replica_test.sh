#!/usr/bin/env bash
# The probe replica's program (src/cmd/probe/probe_replica.py, what `kvcache probe` runs in its
# Pods) against the real store in $KVC_STORE_ENV (run by ctest-run.sh run), configured as the
# webhook configures an engine: the vLLM file vehicle and the SGLang environment vehicle.
#   - two vLLM replicas on one tenant: the second finds all 8 shared-prefix blocks the first
#     wrote and reads them back intact; hit ratio = hit tokens / queried tokens;
#   - SGLang's layout shares nothing with vLLM's; two SGLang replicas share theirs;
#   - another tenant, the same seed: none of them;
#   - the cleanup (KVC_PROBE_MODE=clean) removes every block both vLLM replicas wrote: a replica
#     after it finds none;
#   - a tenant the master does not know: stage write, -1701; nothing listening: stage connect;
#     nothing injected: stage config; a paused master (SIGSTOP): stage stalled, at its deadline.
# usage: probe_replica_test.sh PROBE_REPLICA_PY
set -uo pipefail
SCRIPT=${1:?usage: probe_replica_test.sh PROBE_REPLICA_PY}
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   - $*"; }
[ "$KVC_STORE_MULTI_TENANCY" = 1 ] || fail "needs a multi-tenant store"
work=$(mktemp -d)
trap 'kill -CONT "$KVC_STORE_MASTER_PID" 2>/dev/null; rm -rf "$work"' EXIT
seed=t$RANDOM$RANDOM

register() {
  curl -sf --noproxy '*' -X PUT -H 'Content-Type: application/json' \
    "http://$KVC_STORE_ADMIN/api/v1/tenant_quotas?tenant_id=$1" \
    -d '{"requested_quota_bytes": 67108864}' >/dev/null || fail "registering tenant $1"
}
# vllm_file TENANT [MASTER]: the vLLM file vehicle's JSON, as the webhook projects it.
vllm_file() {
  local f=$work/$1.json
  printf '{"metadata_server":"P2PHANDSHAKE","master_server_address":"%s","protocol":"tcp","device_name":"","mode":"standalone-store","global_segment_size":0,"local_buffer_size":134217728,"tenant_id":"%s"}' \
    "${2:-$KVC_STORE_RPC}" "$1" >"$f"
  echo "$f"
}
# replica ENGINE REPLICA TENANT [MASTER] [DEADLINE]: runs one replica; its result (stdout's last
# line) in $out, its exit code in $rc.
replica() {
  local engine=$1 n=$2 tenant=$3 master=${4:-$KVC_STORE_RPC} deadline=${5:-60}
  local -a env=(KVC_PROBE_ENGINE="$engine" KVC_PROBE_REPLICA="$n" KVC_PROBE_SEED="$seed"
    KVC_PROBE_BLOCK_TOKENS=16 KVC_PROBE_DEADLINE_SECONDS="$deadline"
    KVC_PROBE_RESULT_PATH="$work/result.json" "${extra_env[@]}")
  case $engine in
    vllm) env+=(MOONCAKE_CONFIG_PATH="$(vllm_file "$tenant" "$master")" POD_IP=127.0.0.1) ;;
    sglang) env+=(MOONCAKE_MASTER="$master" MOONCAKE_TENANT_ID="$tenant" MOONCAKE_PROTOCOL=tcp
      MOONCAKE_DEVICE= MOONCAKE_GLOBAL_SEGMENT_SIZE=0 MOONCAKE_LOCAL_HOSTNAME=127.0.0.1
      MOONCAKE_TE_META_DATA_SERVER=P2PHANDSHAKE) ;;
    none) ;;
  esac
  env -i PATH="$PATH" "${env[@]}" "$KVC_STORE_PYTHON" "$SCRIPT" >"$work/stdout.log" 2>"$work/stderr.log"
  rc=$?
  out=$(tail -1 "$work/stdout.log")
}
field() { jq -r "$1" <<<"$2"; }
extra_env=()

register probe-a
register probe-b

replica vllm 1 probe-a; r1=$out; [ $rc = 0 ] || fail "vLLM replica 1: exit $rc: $r1"
replica vllm 2 probe-a; r2=$out; [ $rc = 0 ] || fail "vLLM replica 2: exit $rc: $r2"
echo "vLLM 1: $r1"; echo "vLLM 2: $r2"
[ "$(field '"\(.prefixRead) \(.written)"' "$r1")" = "0 24" ] || fail "replica 1 should find no prefix and write 8 + 8 x 2 blocks"
[ "$(field '"\(.prefixRead)/\(.prefixBlocks) \(.read) \(.corrupt)"' "$r2")" = "8/8 64 0" ] ||
  fail "replica 2 should find the 8 prefix blocks and read 64 blocks intact"
[ "$(field '.hitTokens / .queryTokens' "$r2")" = 0.8 ] || fail "replica 2's hit ratio: 1024 of 1280 tokens"
[ "$(field '.counters["vllm:external_prefix_cache_hits_total"]' "$r2")" = 1024 ] || fail "vLLM's hit counter"
[ "$(cat "$work/result.json")" = "$r2" ] || fail "the result is on the termination log too"
ok "two vLLM replicas: the second read the 8 prefix blocks the first wrote, intact"

replica sglang 1 probe-a; s1=$out; [ $rc = 0 ] || fail "SGLang replica 1: exit $rc: $s1"
replica sglang 2 probe-a; s2=$out; [ $rc = 0 ] || fail "SGLang replica 2: exit $rc: $s2"
[ "$(field '"\(.prefixRead) \(.vehicle)"' "$s1")" = "0 environment" ] || fail "SGLang found vLLM's blocks: $s1"
[ "$(field '"\(.prefixRead) \(.corrupt) \(.put.objects)"' "$s2")" = "8 0 32" ] ||
  fail "SGLang replica 2 should read the prefix, K and V objects a block: $s2"
ok "SGLang: another key layout (none of vLLM's blocks), two objects a page, its own reuse"

# A page with one of its two objects gone is absent as a whole: the hit stops before it, it is
# written again, and each page after it is judged by its own objects (page 3 loses its K, page 4
# its V: both are written again).
env -i PATH="$PATH" KVC_PROBE_ENGINE=sglang KVC_PROBE_SEED="$seed" KVC_PROBE_BLOCK_TOKENS=16 \
  MOONCAKE_MASTER="$KVC_STORE_RPC" MOONCAKE_TENANT_ID=probe-a MOONCAKE_PROTOCOL=tcp \
  MOONCAKE_GLOBAL_SEGMENT_SIZE=0 MOONCAKE_LOCAL_HOSTNAME=127.0.0.1 \
  "$KVC_STORE_PYTHON" - "$SCRIPT" >"$work/remove.log" 2>&1 <<'PY' || fail "removing page 3's K and page 4's V: $(tail -3 "$work/remove.log")"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("probe_replica", sys.argv[1])
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)
p = probe.Probe(probe.workload(), probe.injected_config(), lambda phase: None)
p.setup()
pages = p.prompt_blocks(0, 1)[1]
k3, v4 = pages[3][0], pages[4][1]
assert k3.endswith("_k") and v4.endswith("_v"), (k3, v4)
sys.exit(0 if p.store.remove(k3, True) == 0 and p.store.remove(v4, True) == 0 else 1)
PY
replica sglang 3 probe-a; g=$out; [ $rc = 0 ] || fail "SGLang replica 3: exit $rc: $g"
[ "$(field '"\(.prefixRead) \(.corrupt)"' "$g")" = "3 0" ] || fail "the hit should stop at page 3: $g"
# Its first prompt reads pages 0-2 and writes pages 3 and 4 again with its own 2 suffix pages; the
# 7 others read all 8 prefix pages and write their 2 each.
[ "$(field '"\(.read) \(.written)"' "$g")" = "59 18" ] ||
  fail "3 + 7 x 8 pages read, pages 3 and 4 once and 8 x 2 suffix pages written: $g"
ok "a page missing one of its objects ends the hit and is written again; each page after it is judged by its own"

replica vllm 3 probe-b; b1=$out; [ $rc = 0 ] || fail "another tenant: exit $rc: $b1"
[ "$(field '.prefixRead' "$b1")" = 0 ] || fail "another tenant read probe-a's blocks: $b1"
ok "another tenant, the same seed: none of them"

extra_env=(KVC_PROBE_MODE=clean KVC_PROBE_REPLICAS=2)
replica vllm 0 probe-a; k=$out; [ $rc = 0 ] || fail "cleanup: exit $rc: $k"
extra_env=()
[ "$(field .removed "$k")" = 40 ] || fail "the cleanup should remove the 24 + 16 blocks written: $k"
replica vllm 3 probe-a; a=$out
[ "$(field .prefixRead "$a")" = 0 ] || fail "a replica after the cleanup found blocks: $a"
ok "the cleanup removed the 40 blocks the two replicas wrote; a replica after it finds none"

replica vllm 1 nobody-$seed; u=$out; [ $rc = 1 ] || fail "unregistered tenant: exit $rc"
[ "$(field '"\(.stage) \(.code)"' "$u")" = "write -1701" ] || fail "unregistered tenant: $u"
ok "a tenant the master does not know: write refused -1701"

replica vllm 1 probe-a 127.0.0.1:1; c=$out; [ $rc = 1 ] || fail "nothing listening: exit $rc"
[ "$(field .stage "$c")" = connect ] || fail "nothing listening: $c"
replica none 1 probe-a; n=$out; [ $rc = 1 ] || fail "nothing injected: exit $rc"
[ "$(field .stage "$n")" = config ] || fail "nothing injected: $n"
ok "nothing listening: connect; nothing injected: config"

kill -STOP "$KVC_STORE_MASTER_PID"
t0=$SECONDS
replica vllm 1 probe-a "$KVC_STORE_RPC" 5; p=$out
took=$((SECONDS - t0))
kill -CONT "$KVC_STORE_MASTER_PID"
[ $rc = 1 ] || fail "paused master: exit $rc: $p"
[ "$(field .stage "$p")" = stalled ] || fail "paused master: $p"
[ $took -le 10 ] || fail "paused master: the replica took $took s past a 5 s deadline"
ok "a paused master: stalled after $took s ($(field .detail "$p"))"
