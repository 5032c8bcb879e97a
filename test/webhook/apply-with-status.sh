#!/usr/bin/env bash
# Applies the objects of a cluster file (KVCacheBackend, KVCachePool, KVCachePoolBinding,
# ConfigMap) to the live cluster WITH their status, as the controllers will later write it:
# spec by server-side apply, status through the status subresource. A Binding carrying a
# deletionTimestamp (and a finalizer) is deleted afterwards, so it stays terminating. An object
# the API server refuses (a state that can exist only in a file) is reported and skipped.
#
# Usage: apply-with-status.sh FILE          apply
#        apply-with-status.sh --delete FILE  delete what FILE holds (finalizers stripped)
set -euo pipefail
delete=false
[ "${1:-}" = "--delete" ] && { delete=true; shift; }
file=${1:?usage: apply-with-status.sh [--delete] FILE}
json=$(kubectl create --dry-run=client -o json -f "$file")
items=$(jq -c 'if .kind == "List" then .items[] else . end' <<<"$json")
while IFS= read -r object; do
  [ -n "$object" ] || continue
  kind=$(jq -r '.kind' <<<"$object")
  name=$(jq -r '.metadata.name' <<<"$object")
  ns=$(jq -r '.metadata.namespace // ""' <<<"$object")
  nsflag=()
  [ -n "$ns" ] && nsflag=(-n "$ns")
  resource=$(tr 'A-Z' 'a-z' <<<"$kind")
  if $delete; then
    kubectl "${nsflag[@]}" patch "$resource" "$name" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
    kubectl "${nsflag[@]}" delete "$resource" "$name" --ignore-not-found --wait=true >/dev/null 2>&1 || true
    continue
  fi
  [ -n "$ns" ] && { kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null; }
  if ! jq 'del(.status) | del(.metadata.deletionTimestamp)' <<<"$object" |
      kubectl apply --server-side --force-conflicts --field-manager=kvcache-test -f - >/dev/null; then
    # A state the API refuses to store (e.g. a pool naming no backend) exists only offline.
    echo "apply-with-status: $kind $name was refused by the API server; skipped" >&2
    continue
  fi
  if [ "$(jq 'has("status")' <<<"$object")" = true ]; then
    kubectl "${nsflag[@]}" patch "$resource" "$name" --subresource=status --type=merge \
      -p "$(jq -c '{status: .status}' <<<"$object")" >/dev/null
  fi
  if [ "$(jq '.metadata | has("deletionTimestamp")' <<<"$object")" = true ]; then
    kubectl "${nsflag[@]}" delete "$resource" "$name" --wait=false >/dev/null
  fi
done <<<"$items"
