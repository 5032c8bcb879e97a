#!/usr/bin/env bash
# A master that dies: the pool reports QuotaLedgerAvailable=False/LedgerUnreachable (the Pod
# webhook then refuses injection), the external backend LeaderAvailable=False/LeaderUnreachable;
# a Binding created and one deleted during the outage wait. When the master comes back the
# ledger converges again — the new domain registered, the deleted one removed, nothing else
# touched — and every status is Ready again.
. "$(dirname "$0")/../lib.sh"
kvc_quota_init
kvc_store_up main --members 2 --segment 256MiB
backend=ext-$KVC_ID pool=pool-$KVC_ID
ns=$(kvc_fresh_namespace outage)
kvc_external_backend "$backend"
kvc_pool "$pool" "$backend" 1Gi >/dev/null
kvc_binding "$ns" stays "$pool" 256Mi stays-$KVC_ID >/dev/null
kvc_binding "$ns" leaves "$pool" 128Mi leaves-$KVC_ID >/dev/null
kvc_wait_for 30 "stays is Ready" kvc_phase_is kvcpb "$ns/stays" Ready
kvc_wait_for 30 "leaves is Ready" kvc_phase_is kvcpb "$ns/leaves" Ready
# Someone else's entry in the ledger: never touched by the operator.
curl -sf -X PUT -H 'Content-Type: application/json' -d '{"requested_quota_bytes": 1048576}' \
  "http://$STORE_ADMIN/api/v1/tenant_quotas?tenant_id=theirs-$KVC_ID" >/dev/null

"$STORE_SH" kill-master "$STORE_DIR" 2>/dev/null
kvc_wait_for 60 "the pool reports LedgerUnreachable" \
  kvc_cond_is kvcp "$pool" QuotaLedgerAvailable False/LedgerUnreachable
kvc_assert_eq "the pool is Error" Error "$(kvc_jq kvcp "$pool" .status.phase)"
kvc_assert_contains "the message names the action and the error" "reading the tenant ledger" \
  "$(kvc_jq kvcp "$pool" .status.phaseMessage)"
kvc_wait_for 60 "the backend reports LeaderUnreachable" \
  kvc_cond_is kvcb "$backend" LeaderAvailable False/LeaderUnreachable
kvc_assert_eq "the backend is Error" Error "$(kvc_jq kvcb "$backend" .status.phase)"
kvc_assert_eq "its capacity is cleared by the failed read (absent, not 0)" null \
  "$(kvc_jq kvcb "$backend" .status.capacity)"
kvc_binding "$ns" arrives "$pool" 128Mi arrives-$KVC_ID >/dev/null
kubectl -n "$ns" delete kvcpb leaves --wait=false >/dev/null
sleep 15
kvc_assert_eq "a Binding created during the outage is not Ready" Error \
  "$(kvc_jq kvcpb "$ns/arrives" .status.phase)"
kvc_assert_eq "a Binding deleted during the outage is held: LedgerNotReleased" \
  False/LedgerNotReleased "$(kvc_cond kvcpb "$ns/leaves" Releasable)"

"$STORE_SH" start-master "$STORE_DIR" 2>/dev/null
kvc_wait_for 90 "the pool is Ready again" kvc_phase_is kvcp "$pool" Ready
kvc_wait_for 90 "the new Binding is Ready" kvc_phase_is kvcpb "$ns/arrives" Ready
kvc_wait_for 60 "the deleted Binding is released" kvc_gone kvcpb "$ns/leaves"
kvc_wait_for 60 "the backend is Ready again" kvc_phase_is kvcb "$backend" Ready
kvc_wait_for 60 "the ledger holds what is asked for and the other entry, nothing else" kvc_ledger_is \
  "arrives-$KVC_ID=134217728/134217728 stays-$KVC_ID=268435456/268435456 theirs-$KVC_ID=1048576/1048576"
kvc_done
