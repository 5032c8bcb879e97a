#!/usr/bin/env bash
# Every rendered set of the managed store's golden corpus (test/golden/store/*.golden) is what
# the real API server accepts: `kubectl apply --dry-run=server` of each, every object through
# the server's own validation and defaulting, so a field the renderer misspells or misplaces
# fails here and not on a user's cluster. Cases whose golden is an error are skipped.
. "$(dirname "$0")/../lib.sh"
kvc_init
ns=$(kvc_fresh_namespace store-render)
corpus="$(dirname "$0")/../../golden/store"
checked=0
for golden in "$corpus"/*.golden; do
  head -1 "$golden" | grep -q '^# error' && continue
  # Each golden names its own namespace; the objects go to this test's instead.
  manifest=$(sed -E "s/^( +)namespace: (gpustack-system|kv-system)\$/\\1namespace: $ns/" "$golden")
  kvc_assert_ok "the API server accepts $(basename "$golden" .golden)" \
    kubectl apply --dry-run=server -f - <<<"$manifest"
  checked=$((checked + 1))
done
kvc_assert_eq "at least ten rendered sets were checked" true "$([ $checked -ge 10 ] && echo true)"
kvc_done
