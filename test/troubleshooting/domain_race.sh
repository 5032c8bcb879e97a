#!/usr/bin/env bash
# Troubleshooting row "Two Bindings report one domain — DomainExclusive=False/
# DomainClaimedByMultipleBindings: two creates raced past admission" (issue 27 §1), on the real
# path: two Bindings with one reuse domain on one pool, created at the same instant through the
# installed webhook (two replicas, each judging from its own cache), in two namespaces, until
# both are admitted (each attempt that one admission refuses as Duplicate is undone and tried
# again). Then:
#   - both report DomainExclusive=False/DomainClaimedByMultipleBindings, each naming the other and
#     the fix; neither reports a grant (the contested domain is left out of the ledger);
#   - the fix the row gives, delete one of them: it is released when its admission window closes
#     (the pool's status, listing the domain once for the live Binding, is written meanwhile: it
#     was refused 422 Duplicate, and the release waited for a resync), and the other is
#     DomainExclusive=True and granted.
set -uo pipefail
. "$(dirname "$0")/../managed/lib.sh"
kvc_init
kvc_require_real_nodes
b=domain-race
here=$(cd "$(dirname "$0")" && pwd)
cleanup_race() {
  for n in "${ns1:-}" "${ns2:-}"; do
    [ -n "$n" ] && kubectl -n "$n" delete kvcpb --all --timeout=120s >/dev/null 2>&1
  done
  kubectl delete kvcp $b --ignore-not-found --timeout=120s >/dev/null 2>&1
  delete_backend $b
}
trap 'cleanup_race; kvc_cleanup' EXIT

kvc_assert_ok "backend $b" managed_backend $b 256Mi
kvc_assert_ok "pool $b on it" managed_pool $b $b 512Mi
kvc_wait_for 240 "the pool is Ready" bash -c "[ \"\$(kubectl get kvcp $b -o jsonpath='{.status.phase}')\" = Ready ]"
ns1=$(kvc_fresh_namespace race-a)
ns2=$(kvc_fresh_namespace race-b)

server=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
ca=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')
cert=$(kubectl config view --raw --minify -o jsonpath='{.users[0].user.client-certificate}')
key=$(kubectl config view --raw --minify -o jsonpath='{.users[0].user.client-key}')
attempts=0 raced=0
while [ $attempts -lt 30 ]; do
  attempts=$((attempts + 1))
  codes=$(python3 "$here/create_at_once.py" "$server" "$ca" "$cert" "$key" "$b" shared "$ns1" "$ns2")
  kvc_log "attempt $attempts: $codes"
  if [ "$codes" = "201 201" ]; then raced=1; break; fi
  for n in "$ns1" "$ns2"; do kubectl -n "$n" delete kvcpb --all --wait=true >/dev/null 2>&1; done
done
kvc_assert_eq "two creates raced past admission (both admitted)" 1 $raced
kvc_log "both admitted at attempt $attempts"

kvc_wait_for 60 "$ns1/claim: DomainExclusive=False/DomainClaimedByMultipleBindings" \
  object_condition_is kvcpb claim DomainExclusive False/DomainClaimedByMultipleBindings "$ns1"
kvc_wait_for 60 "$ns2/claim: DomainExclusive=False/DomainClaimedByMultipleBindings" \
  object_condition_is kvcpb claim DomainExclusive False/DomainClaimedByMultipleBindings "$ns2"
kvc_wait_for 30 "kvcache diagnose names both: Two Bindings report one domain" bash -c \
  "diagnose_finds KVCachePoolBinding $ns1/claim 'Two Bindings report one domain' && diagnose_finds KVCachePoolBinding $ns2/claim 'Two Bindings report one domain'"
message=$(object_message kvcpb claim DomainExclusive "$ns1")
kvc_log "DomainExclusive of $ns1/claim: $message"
kvc_assert_contains "each naming the other" "$ns2/claim" "$message"
kvc_assert_contains "and the fix" "Fix: delete one of them" "$message"
kvc_assert_contains "and the other the first" "$ns1/claim" "$(object_message kvcpb claim DomainExclusive "$ns2")"
for n in "$ns1" "$ns2"; do
  kvc_assert_eq "$n/claim reports no grant (QuotaGranted and effectiveQuota absent: the domain is left out of the ledger)" "/" \
    "$(kubectl -n "$n" get kvcpb claim -o jsonpath='{.status.conditions[?(@.type=="QuotaGranted")].status}/{.status.effectiveQuota}')"
done

t0=$SECONDS
kvc_assert_ok "the fix: one of them deleted" kubectl -n "$ns2" delete kvcpb claim --wait=false
# Released when its admission window (10 s) closes, not a resync later: while it is held the
# other's claim is registered, and the pool must still be able to write its status (it lists the
# domain once, naming the live Binding).
kvc_wait_for 20 "the deleted one is released within its admission window and a pass" \
  bash -c "! kubectl -n $ns2 get kvcpb claim >/dev/null 2>&1"
kvc_log "released $((SECONDS - t0)) s after the delete began"
kvc_assert_eq "the pool lists the domain once, naming the live Binding" "shared=$ns1/claim" \
  "$(kubectl get kvcp $b -o jsonpath='{range .status.domains[*]}{.name}={.binding.namespace}/{.binding.name}{end}')"
kvc_wait_for 60 "the other: DomainExclusive=True" \
  bash -c "[ \"\$(kubectl -n $ns1 get kvcpb claim -o jsonpath='{.status.conditions[?(@.type==\"DomainExclusive\")].status}')\" = True ]"
kvc_wait_for 60 "and granted" binding_granted "$ns1" claim
kvc_log "exclusive and granted $((SECONDS - t0)) s after the delete"
kvc_done
