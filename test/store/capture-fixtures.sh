#!/usr/bin/env bash
# Records what a real Mooncake master answers on its admin port, for the unit tests of the store
# layer (test/unit/store). Starts its own stores (store.sh) in a temporary directory, drives them
# into the states worth recording, and writes one file per answer plus an index:
#
#   OUT/<version>/<name>            the body, byte for byte
#   OUT/<version>/index.tsv         name, HTTP status, method, path (with query), what it shows
#
# usage: capture-fixtures.sh [--version V]... [OUT]
#   OUT defaults to test/unit/store/fixtures. Without --version, both 0.3.13.post1 (the pinned
#   wheel) and 0.3.12.post1 (the older ledger JSON and metric families) are captured.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

VERSIONS=()
OUT=
while [ $# -gt 0 ]; do
  case $1 in
    --version) shift; VERSIONS+=("${1:?}") ;;
    --version=*) VERSIONS+=("${1#*=}") ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "capture-fixtures.sh: unknown option '$1'" >&2; exit 2 ;;
    *) OUT=$1 ;;
  esac
  shift
done
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(0.3.13.post1 0.3.12.post1)
OUT=${OUT:-$ROOT/test/unit/store/fixtures}

log() { printf '[capture %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kvc-capture.XXXXXX")
STORES=()
cleanup() {
  local d
  for d in "${STORES[@]+"${STORES[@]}"}"; do
    "$HERE/store.sh" down "$d" >/dev/null 2>&1 || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# record NAME METHOD PATH NOTE [BODY]: one exchange with the current master.
record() {
  local name=$1 method=$2 path=$3 note=$4 body=${5:-} status
  local args=(-s --noproxy '*' --max-time 5 -o "$DEST/$name" -w '%{http_code}' -X "$method")
  if [ -n "$body" ]; then
    args+=(-H 'Content-Type: application/json' --data-binary "$body")
  fi
  status=$(curl "${args[@]}" "http://$KVC_STORE_ADMIN$path")
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$method" "$path" "$note" >>"$DEST/index.tsv"
  log "$method $path -> $status ($name)"
}

# write TENANT: a 1 MiB put from the wheel's Python store API; prints put()'s return code.
write_object() {
  LD_LIBRARY_PATH=$KVC_STORE_LD_LIBRARY_PATH "$KVC_STORE_PYTHON" "$HERE/tests/writer.py" \
    --master "$KVC_STORE_RPC" --tenant "$1" --key capture --bytes 1048576 2>/dev/null | tail -n1
}

capture_version() {
  local version=$1
  local mt=$WORK/$version-mt nomt=$WORK/$version-nomt
  export KVC_MOONCAKE_VERSION=$version
  "$HERE/install.sh" >&2
  DEST=$OUT/$version
  rm -rf "$DEST"
  mkdir -p "$DEST"
  printf 'name\tstatus\tmethod\tpath\tnote\n' >"$DEST/index.tsv"

  # 1. A master without multi-tenancy and without members.
  STORES+=("$nomt")
  "$HERE/store.sh" --no-multi-tenancy --members 0 up "$nomt"
  # shellcheck disable=SC1091
  . "$nomt/env"
  record metrics_no_multi_tenancy.txt GET /metrics "no member, multi-tenancy off"
  record segments_detail_empty.json GET /get_segments_detail "no member"
  record ledger_list_disabled.json GET /api/v1/tenant_quotas "multi-tenancy off: 409 -1011"
  record ledger_put_disabled.json PUT '/api/v1/tenant_quotas?tenant_id=team-a' \
    "multi-tenancy off: 409 -1011" '{"requested_quota_bytes":1048576}'
  "$HERE/store.sh" down "$nomt"

  # 2. A multi-tenant master with two 64 MiB members (capacity 128 MiB).
  STORES+=("$mt")
  "$HERE/store.sh" --members 2 --segment 64MiB up "$mt"
  # shellcheck disable=SC1091
  . "$mt/env"
  local q=/api/v1/tenant_quotas
  record health.json GET /health "a serving, non-HA master"
  record segments_detail.json GET /get_segments_detail "two 64 MiB members"
  record ledger_list_empty.json GET $q "no tenant yet"
  record metrics_empty_ledger.txt GET /metrics "two members, multi-tenancy on, no tenant"
  record ledger_put_team_a.json PUT "$q?tenant_id=team-a" "64 MiB, fits" \
    '{"requested_quota_bytes":67108864}'
  record ledger_put_team_b.json PUT "$q?tenant_id=team-b" "128 MiB: 192 MiB over 128 MiB, recut" \
    '{"requested_quota_bytes":134217728}'
  log "1 MiB put as team-a: $(write_object team-a)"
  record ledger_list.json GET $q "team-a (1 MiB written) and team-b, recut"
  record ledger_get_team_a.json GET "$q?tenant_id=team-a" "team-a holding 1 MiB"
  record metrics.txt GET /metrics "two tenants, team-a holding 1 MiB"
  record ledger_get_unknown.json GET "$q?tenant_id=nobody" "404 -704"
  record ledger_delete_unknown.json DELETE "$q?tenant_id=nobody" "404 -704"
  record ledger_put_zero.json PUT "$q?tenant_id=team-c" "400 -600" '{"requested_quota_bytes":0}'
  record ledger_put_too_large.json PUT "$q?tenant_id=team-c" "2^63: 400 -600" \
    '{"requested_quota_bytes":9223372036854775808}'
  record ledger_put_bad_json.json PUT "$q?tenant_id=team-c" "400 -600" '{"requested_quota_bytes":'
  record ledger_put_reserved_name.json PUT "$q?tenant_id=_system" "leading _: 400 -600" \
    '{"requested_quota_bytes":1024}'
  record ledger_put_no_tenant.json PUT "$q" "no tenant_id: 400 -600" \
    '{"requested_quota_bytes":1024}'
  record ledger_delete_not_empty.json DELETE "$q?tenant_id=team-a" "team-a holds 1 MiB: 409 -1702"
  # The policy file's path turned into a directory: the connector cannot save (500 -1503).
  mv "$KVC_STORE_POLICY_FILE" "$KVC_STORE_POLICY_FILE.saved"
  mkdir "$KVC_STORE_POLICY_FILE"
  record ledger_put_persist_fail.json PUT "$q?tenant_id=team-c" "policy not writable: 500 -1503" \
    '{"requested_quota_bytes":1024}'
  rmdir "$KVC_STORE_POLICY_FILE"
  mv "$KVC_STORE_POLICY_FILE.saved" "$KVC_STORE_POLICY_FILE"
  record ledger_delete_team_b.json DELETE "$q?tenant_id=team-b" "a clean delete"
  record route_post_not_found.txt POST "$q?tenant_id=team-b" "no such method: a bare 404" \
    '{"requested_quota_bytes":1024}'
  record route_unknown.txt GET /no/such/route "a bare 404"
  cp "$KVC_STORE_POLICY_FILE" "$DEST/policy_file_saved_by_master.yaml"
  printf '%s\t%s\t%s\t%s\t%s\n' policy_file_saved_by_master.yaml 0 FILE - \
    "the file connector's own rewrite (team-a only)" >>"$DEST/index.tsv"
  "$HERE/store.sh" down "$mt"

  LD_LIBRARY_PATH=$KVC_STORE_LD_LIBRARY_PATH "$KVC_STORE_VENV/bin/mooncake_master" --version \
    2>&1 | head -n1 >"$DEST/VERSION"
  log "wrote $DEST ($(($(wc -l <"$DEST/index.tsv") - 1)) answers)"
}

for v in "${VERSIONS[@]}"; do
  capture_version "$v"
done
