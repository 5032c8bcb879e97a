#!/usr/bin/env bash
# Releasing a Binding: its tenant leaves the master's ledger and its finalizer goes — but only
# after the admission window, and never while the tenant still holds objects: TENANT_NOT_EMPTY
# keeps the entry (the Binding says so, Releasable=False/LedgerNotReleased) until they are gone.
# A deleting pool is held by its Bindings (HeldByBindings), then releases its backend claim.
. "$(dirname "$0")/../lib.sh"
kvc_quota_init
kvc_store_up main --members 2 --segment 256MiB
backend=ext-$KVC_ID pool=pool-$KVC_ID
ns=$(kvc_fresh_namespace release)
kvc_external_backend "$backend"
kvc_pool "$pool" "$backend" 1Gi >/dev/null
kvc_binding "$ns" keep "$pool" 128Mi keep-$KVC_ID 16 bfloat16 >/dev/null
kvc_binding "$ns" gone "$pool" 128Mi gone-$KVC_ID 16 bfloat16 >/dev/null
kvc_binding "$ns" busy "$pool" 128Mi busy-$KVC_ID 16 bfloat16 >/dev/null
for b in keep gone busy; do kvc_wait_for 30 "$b is Ready" kvc_phase_is kvcpb "$ns/$b" Ready; done
kvc_assert_eq "three domains in the ledger" 3 "$(kvc_ledger | wc -w)"

# A plain release.
t0=$SECONDS
kubectl -n "$ns" delete kvcpb gone --wait=false >/dev/null
kvc_wait_for 10 "a deleting Binding is Deleting" kvc_phase_is kvcpb "$ns/gone" Deleting
kvc_assert_eq "while the admission window runs: LedgerNotReleased" False/LedgerNotReleased \
  "$(kvc_cond kvcpb "$ns/gone" Releasable)"
kvc_assert_contains "the message says why the entry stays" "admitted just before the deletion" \
  "$(kvc_jq kvcpb "$ns/gone" .status.phaseMessage)"
kvc_assert_contains "the entry stays meanwhile" "gone-$KVC_ID=" "$(kvc_ledger)"
kvc_wait_for 40 "the released Binding is gone" kvc_gone kvcpb "$ns/gone"
if (( SECONDS - t0 >= 10 )); then _kvc_pass "not released before the 10 s window ($((SECONDS - t0)) s)"
else _kvc_fail "released after $((SECONDS - t0)) s, inside the 10 s window"; fi
case " $(kvc_ledger) " in
  *" gone-$KVC_ID="*) _kvc_fail "its tenant left the ledger" "$(kvc_ledger)" ;;
  *) _kvc_pass "its tenant left the ledger" ;;
esac
kvc_assert_eq "the pool no longer lists its domain" "busy-$KVC_ID keep-$KVC_ID" \
  "$(kvc_jq kvcp "$pool" '[.status.domains[].name] | join(" ")')"

# A tenant holding an object (written with the wheel's Python client under its tenant).
kvc_assert_eq "a write under the busy tenant succeeds" 0 "$(kvc_write "busy-$KVC_ID" obj-1)"
kubectl -n "$ns" delete kvcpb busy --wait=false >/dev/null
kvc_wait_for 40 "TENANT_NOT_EMPTY retains it: Releasable=False/LedgerNotReleased after the window" \
  bash -c "[ \"\$(kubectl -n $ns get kvcpb busy -o json | jq -r '.status.conditions[] | select(.type == \"Releasable\") | .message')\" != \"\" ] && kubectl -n $ns get kvcpb busy -o json | jq -e '.status.conditions[] | select(.type == \"Releasable\") | .message | test(\"TENANT_NOT_EMPTY\")'"
kvc_assert_eq "the Binding says so: Releasable" False/LedgerNotReleased "$(kvc_cond kvcpb "$ns/busy" Releasable)"
kvc_assert_contains "and names the domain" "busy-$KVC_ID" "$(kvc_jq kvcpb "$ns/busy" .status.phaseMessage)"
kvc_assert_contains "the entry is kept in the ledger" "busy-$KVC_ID=" "$(kvc_ledger)"
kvc_assert_contains "the pool reports the retained domain's outcome" True/Writable \
  "$(kvc_cond kvcp "$pool" QuotaPolicyWritable)"
# Once its objects are gone, the retry (with backoff) releases it.
curl -sf -X POST "http://$STORE_ADMIN/api/v1/remove_all?force=true&tenant_id=busy-$KVC_ID" >/dev/null
kvc_wait_for 60 "once its objects are gone it is released" kvc_gone kvcpb "$ns/busy"
kvc_assert_eq "only keep is left in the ledger" "keep-$KVC_ID=134217728/134217728" "$(kvc_ledger)"

# The backend, deleted while the pool uses it: held (its finalizer), Deleting, naming the pool.
kubectl delete kvcb "$backend" --wait=false >/dev/null
kvc_wait_for 20 "a backend a pool uses is held: Deleting" kvc_phase_is kvcb "$backend" Deleting
kvc_assert_eq "Deletable=False/InUse" False/InUse "$(kvc_cond kvcb "$backend" Deletable)"
kvc_assert_contains "the phase message names the pool" "$pool" "$(kvc_jq kvcb "$backend" .status.phaseMessage)"

# The pool, deleted while a Binding still names it: held; then released with its claim.
kubectl delete kvcp "$pool" --wait=false >/dev/null
kvc_wait_for 20 "a pool with Bindings is held: Releasable=False/HeldByBindings" \
  kvc_cond_is kvcp "$pool" Releasable False/HeldByBindings
kvc_assert_contains "it names the Binding" "$ns/keep" "$(kvc_jq kvcp "$pool" .status.phaseMessage)"
kvc_assert_eq "the pool is Deleting" Deleting "$(kvc_jq kvcp "$pool" .status.phase)"
kubectl -n "$ns" delete kvcpb keep --wait=false >/dev/null
kvc_wait_for 60 "the last Binding goes, then the pool" kvc_gone kvcp "$pool"
kvc_assert_eq "the ledger is empty" "" "$(kvc_ledger)"
kvc_wait_for 30 "with its last pool gone, the backend goes too" kvc_gone kvcb "$backend"
kvc_done
