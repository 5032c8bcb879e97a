#!/usr/bin/env bash
# `kvcache store status` against the store in $KVC_STORE_ENV (run by ctest-run.sh run).
# usage: status_command_test.sh KVCACHE_BINARY
set -euo pipefail
KVCACHE=${1:?usage: status_command_test.sh KVCACHE_BINARY}
fail() { echo "FAIL: $*" >&2; exit 1; }

table=$("$KVCACHE" store status --admin "$KVC_STORE_ADMIN") || fail "exit $? on a serving master"
echo "$table"
capacity=$((KVC_STORE_MEMBERS * KVC_STORE_SEGMENT_BYTES))
grep -q "serving (service_ready)" <<<"$table" || fail "no serving line"
grep -q "total ($capacity B)" <<<"$table" || fail "capacity $capacity not shown"
grep -q "MEMBERS: $KVC_STORE_MEMBERS segment(s)" <<<"$table" || fail "member count not shown"
for ((i = 0; i < KVC_STORE_MEMBERS; i++)); do
  seg=KVC_STORE_MEMBER_${i}_SEGMENT
  grep -q "^${!seg} " <<<"$table" || fail "segment ${!seg} not listed"
done
if [ "$KVC_STORE_MULTI_TENANCY" = 1 ]; then
  grep -q "TENANT LEDGER:" <<<"$table" || fail "no ledger section"
else
  grep -q "multi-tenancy is disabled" <<<"$table" || fail "disabled ledger not explained"
fi

json=$("$KVCACHE" store status --admin "$KVC_STORE_ADMIN" -o json) || fail "json: exit $?"
[ "$(jq -r .capacity.totalBytes <<<"$json")" = "$capacity" ] || fail "json totalBytes"
[ "$(jq -r '.members.segments | length' <<<"$json")" = "$KVC_STORE_MEMBERS" ] \
  || fail "json segments"
[ "$(jq -r .healthy <<<"$json")" = true ] || fail "json healthy"

# A master that does not answer: exit 1. Bad flags: exit 2.
set +e
"$KVCACHE" store status --admin 127.0.0.1:1 --timeout 1 >/dev/null 2>&1; rc=$?
[ $rc = 1 ] || fail "unreachable master: exit $rc, expected 1"
"$KVCACHE" store status --admin not-an-address >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "bad --admin: exit $rc, expected 2"
