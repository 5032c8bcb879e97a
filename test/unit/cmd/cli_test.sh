#!/usr/bin/env bash
# Runs the real `kvcache` binary the way a user does and checks exit codes and streams.
set -uo pipefail
kvcache=$1
root=$2
ex=$root/examples/inject
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

check() {  # check NAME CONDITION-COMMAND...
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $name"
    echo "  stdout: $(head -c 600 "$tmp/out")"
    echo "  stderr: $(head -c 600 "$tmp/err")"
  fi
}
run() { "$kvcache" "$@" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/code"; }
code() { [ "$(cat "$tmp/code")" = "$1" ]; }
out_has() { grep -qF -- "$1" "$tmp/out"; }
err_has() { grep -qF -- "$1" "$tmp/err"; }

run inject -f "$ex/workloads.yaml" --cluster "$ex/cluster.yaml"
check "inject admits the examples" code 0
check "three documents, separated" test "$(grep -c '^---$' "$tmp/out")" = 2
check "the record is written" out_has 'kvcache.gpustack.ai/injected'

run inject -f "$ex/workloads.yaml" --cluster "$ex/cluster.yaml" -o json
check "-o json with several documents" code 0
check "is one v1 List" test "$(jq -r '.kind' "$tmp/out")" = List

head -n 30 "$ex/workloads.yaml" | sed '/^---$/,$d' >"$tmp/one.yaml"
run inject -f "$tmp/one.yaml" --cluster "$ex/cluster.yaml" -o json
check "-o json with one document is exactly one object" test "$(jq -s 'length' "$tmp/out")-$(jq -r '.kind' "$tmp/out")" = 1-Deployment

run inject -f - --cluster "$ex/cluster.yaml" <"$ex/workloads.yaml"
check "reads stdin" code 0

run inject -f "$ex/refused.yaml" --cluster "$ex/cluster.yaml"
check "a refusal exits 3" code 3
check "nothing on stdout" test ! -s "$tmp/out"
check "stderr names the document" err_has 'Pod team-a/scripted: container "server" is launched through "bash -lc"'

{ cat "$ex/workloads.yaml"; printf -- '---\n'; cat "$ex/refused.yaml"; } >"$tmp/mixed.yaml"
run inject -f "$tmp/mixed.yaml" --cluster "$ex/cluster.yaml"
check "one refused document refuses the run" code 3
check "and prints nothing" test ! -s "$tmp/out"

printf 'kind: Pod\nmetadata: [unclosed\n' >"$tmp/bad.yaml"
run inject -f "$tmp/bad.yaml" --cluster "$ex/cluster.yaml"
check "bad YAML exits 2" code 2
check "naming file and line" err_has "$tmp/bad.yaml: YAML syntax error at line"

run inject -f "$tmp/missing.yaml" --cluster "$ex/cluster.yaml"
check "a missing file exits 2" code 2

printf 'apiVersion: v1\nmetadata: {name: x}\n' >"$tmp/nokind.yaml"
run inject -f "$tmp/nokind.yaml" --cluster "$ex/cluster.yaml"
check "a document without kind exits 2" code 2
check "naming the document" err_has 'document 1 (line 1): the document has no kind'

cat >"$tmp/bool.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: p
  labels:
    kvcache.gpustack.ai/inject: true
spec:
  containers: [{name: c, command: [vllm]}]
YAML
run inject -f "$tmp/bool.yaml" --cluster "$ex/cluster.yaml"
check "an unquoted boolean label exits 2" code 2
check "naming the field and the fix" err_has 'metadata.labels["kvcache.gpustack.ai/inject"] must be a string, not boolean; quote the value'

printf 'kind: KVCachePool\nmetadata: {name: p}\nspec: {backends: b}\n' >"$tmp/badcluster.yaml"
run inject -f "$ex/workloads.yaml" --cluster "$tmp/badcluster.yaml"
check "a malformed cluster file exits 2" code 2
check "naming the field" err_has 'spec.backends must be a list'

run inject -f "$ex/workloads.yaml" --cluster "$ex/cluster.yaml" --bogus
check "an unknown flag exits 2" code 2

run inject -f "$ex/workloads.yaml"
check "no cluster source exits 2" code 2
check "naming both ways to give one" err_has '--cluster FILE or --kubeconfig PATH'

run inject -f "$ex/workloads.yaml" --cluster "$ex/cluster.yaml" --kubeconfig "$tmp/kc"
check "--cluster and --kubeconfig together exit 2" code 2

printf 'apiVersion: v1\nkind: Config\nclusters: []\n' >"$tmp/kubeconfig"
run inject -f "$ex/workloads.yaml" --kubeconfig "$tmp/kubeconfig"
check "an unusable kubeconfig exits 2" code 2

run inject --help
check "--help exits 0" code 0
check "--help documents the exit codes" out_has 'Exit codes: 0'

run check-inject -f "$ex/workloads.yaml" --cluster "$ex/cluster.yaml"
check "check-inject explains admitted workloads" code 0
check "with the decision table" out_has 'CONTAINER'
check "and the untouched sidecar" out_has 'metrics    untouched'

run check-inject -f "$ex/refused.yaml" --cluster "$ex/cluster.yaml"
check "check-inject exits 3 on a refusal" code 3
check "and names the reason" out_has 'ShellCommandString'
check "and the fix" out_has 'fix: launch the engine directly'

run --version
check "--version" out_has 'kvcache '

# store survey: what a tier directory holds, in the termination log, always exit 0.
mkdir -p "$tmp/tier/a" "$tmp/ctl/x" "$tmp/ctl/y"
: >"$tmp/tier/b"
run store survey --path "$tmp/tier" --control "$tmp/ctl" --termination-log "$tmp/log"
check "survey exits 0" code 0
check "survey writes entries and control" test "$(cat "$tmp/log")" = "entries=2 control=2"
run store survey --path "$tmp/missing" --control "$tmp/ctl" --termination-log "$tmp/log"
check "an unreadable tier is -1, still exit 0" test "$(cat "$tmp/log")-$(cat "$tmp/code")" = "entries=-1 control=2-0"
run store survey --control "$tmp/ctl"
check "survey without --path is bad input" code 2
check "and names the flag" err_has '--path'

# store leader: flags are refused before anything runs.
run store leader --lease no-slash -- true
check "a --lease without a namespace is bad input" code 2
check "and names the flag" err_has '--lease'
run store leader --health-address 0
check "no master command is bad input" code 2
check "and says where it goes" err_has 'after `--`'
run store leader --lease ns/l --lease-duration 4s --renew-deadline 3s --stop-grace 1s -- true
check "timers that let a cut-off master outlive its Lease are bad input" code 2
check "and name the flags and the rule" err_has '--lease-duration, --renew-deadline, --stop-grace: the renew deadline (3000 ms) + the stop time (1000 ms) + 250 ms must not exceed the lease duration (4000 ms)'
run store leader --lease ns/l --policy-configmap ns/p -- mooncake_master -rpc_port=50051
check "a policy ConfigMap for a master that reads no policy file is bad input" code 2
check "and names the flag and the master's flag" err_has '--policy-configmap: the master'"'"'s command line names no policy file: give it -tenant_quota_connector_uri=PATH'
run store leader --policy-configmap ns/p -- mooncake_master -tenant_quota_connector_uri=/p.yaml
check "a policy ConfigMap without --lease is bad input (it is read on winning the Lease)" code 2
check "and says so" err_has 'given with --lease'
run store leader --health-address 0 -- sh -c 'exit 7'
check "without --lease the master's exit code is the launcher's" code 7

# store member: a malformed Lease address names the variable; a Service address runs directly.
MOONCAKE_MASTER=k8s://no-lease run store member -- true
check "a k8s:// address without a Lease is bad input" code 2
check "and names MOONCAKE_MASTER" err_has 'MOONCAKE_MASTER'
MOONCAKE_MASTER=svc.ns.svc:50051 run store member -- sh -c 'exit 5'
check "with a Service address the member's exit code is the supervisor's" code 5

# status and diagnose over a recorded state: a Binding granted nothing (a problem), an
# oversubscribed pool (a note).
cat >"$tmp/state.yaml" <<'YAML'
apiVersion: worker.gpustack.ai/v1
kind: KVCachePool
metadata: {name: p}
spec: {backends: [b], quota: {total: 1Gi}}
status:
  phase: Ready
  conditions: [{type: QuotaWithinTotal, status: "False", reason: Oversubscribed, message: over}]
---
apiVersion: worker.gpustack.ai/v1
kind: KVCachePoolBinding
metadata: {name: t, namespace: team-a}
spec: {poolRef: {name: p}, quota: {ceiling: 2Gi}, domain: {blockSize: 16, dtype: bfloat16}}
status:
  phase: Ready
  effectiveQuota: "0"
  conditions: [{type: QuotaGranted, status: "False", reason: ZeroGranted, message: nothing}]
YAML
run diagnose --state "$tmp/state.yaml"
check "diagnose: a problem found is exit 3" code 3
check "and names the symptom and the fix" out_has 'KVCachePoolBinding team-a/t: KVCachePoolBinding effectiveQuota: 0'
run diagnose --state "$tmp/state.yaml" -o json
check "diagnose -o json: one problem, one note" test "$(jq -c '[.problems, .notes]' "$tmp/out")" = '[1,1]'
sed -i '/^---$/,$d' "$tmp/state.yaml"
run diagnose --state "$tmp/state.yaml"
check "diagnose: notes only is exit 0" code 0
run status --state "$tmp/state.yaml" -o json
check "status: the pool without its backend is listed, not dropped" \
  test "$(jq -r '.poolsWithoutBackend[0].name' "$tmp/out")" = p
echo 'kind: Secret' >"$tmp/secret.yaml"
run status --state "$tmp/secret.yaml"
check "status: a recorded state of another kind is bad input" code 2
check "and names the kind" err_has "not 'Secret'"
run probe -n team-a
check "probe without --binding is bad input" code 2

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
