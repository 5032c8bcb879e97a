#!/usr/bin/env bash
# One corpus, two paths: every Pod of the injection golden corpus is created through the real
# API server with the operator's webhook registered (kubectl create --dry-run=server), and must
# come out exactly as offline `kvcache inject` says — the same injected fields, or a refusal with
# the same message. Each cluster file of the corpus is applied (with status) in turn.
. "$(dirname "$0")/../../cluster/lib.sh"
. "$(dirname "$0")/../lib.sh"
kvc_init
# shellcheck disable=SC1091
. "$KVC_OPERATOR_DIR/operator.env"
corpus=$KVC_REPO_DIR/test/golden/inject
kvcache=$KVC_OPERATOR_BINARY
work=$(mktemp -d)

# The fields injection writes, in a form that survives API-server defaulting: env values or
# fieldRef paths, args, mounts, the webhook's volume, the kvcache annotations and labels.
normalize='
  def env: [ .[]? | {name, v: (if .valueFrom then "fieldRef:" + .valueFrom.fieldRef.fieldPath else (.value // "") end)} ];
  def ours: select((.name | startswith("kube-api-access-")) | not);
  {
    labels: (.metadata.labels // {}),
    annotations: ((.metadata.annotations // {}) | with_entries(select(.key | startswith("kvcache.gpustack.ai/")))),
    containers: [ .spec.containers[] | {name, command, args, env: (.env | env),
                  mounts: [ .volumeMounts[]? | ours | {name, mountPath, readOnly: (.readOnly // false)} ]} ],
    volumes: [ .spec.volumes[]? | ours | {name, items: ((.downwardAPI.items // []) | map({path, f: .fieldRef.fieldPath}))} ]
  }'

replay_group() {  # replay_group CLUSTER-NAME
  local group=$1 clusterfile=$corpus/clusters/$1.yaml case stem directive pods
  kvc_log "cluster $group"
  "$KVC_REPO_DIR/test/webhook/apply-with-status.sh" "$clusterfile"
  if [ "$group" = dtype-off ]; then
    # A Settings change applies without a restart: wait until the webhook renders no dtype.
    kvc_wait_for 60 "the webhook picks up model-deployment-kv-cache-dtype-owned=false" \
      bash -c "kubectl create --dry-run=server -n team-a -o json -f '$corpus/cases/014-dtype-setting-off.yaml' | grep -q 'kvcache.gpustack.ai/injected'"
  fi
  for case in "$corpus"/cases/*.yaml; do
    stem=$(basename "$case" .yaml)
    directive=$(sed -n 's/^# cluster: //p' "$case" | head -n 1)
    [ "${directive:-default}" = "$group" ] || continue
    # A pool naming no backend is refused by the CRD schema (spec.backends minItems 1): that
    # state exists only in a cluster file, so the case is covered offline only.
    [ "$stem" = 075-refused-pool-names-no-backend ] && continue
    # Only Pods reach the Pod webhook; workloads' templates are covered offline.
    pods=$(kubectl create --dry-run=client -o json -n team-a -f "$case" 2>/dev/null |
      jq -c 'if .kind == "List" then .items[] else . end | select(.kind == "Pod")')
    [ -n "$pods" ] || continue
    local offline_rc=0
    "$kvcache" inject -f "$case" --cluster "$clusterfile" -n team-a -o json >"$work/offline.json" 2>"$work/offline.err" || offline_rc=$?
    # Live mode resolves from the cluster exactly as the webhook does: the same output.
    local live_rc=0
    "$kvcache" inject -f "$case" --kubeconfig "$KUBECONFIG" -n team-a -o json >"$work/live.json" 2>"$work/live.err" || live_rc=$?
    if [ "$live_rc" = "$offline_rc" ] && cmp -s "$work/live.json" "$work/offline.json" &&
       cmp -s <(sed 's/^.*: //' "$work/live.err") <(sed 's/^.*: //' "$work/offline.err"); then
      _kvc_pass "$stem: kvcache inject --kubeconfig matches --cluster"
    else
      _kvc_fail "$stem: kvcache inject --kubeconfig differs from --cluster" \
        "exit $live_rc vs $offline_rc" "$(diff <(cat "$work/offline.json" "$work/offline.err") <(cat "$work/live.json" "$work/live.err") | head -10)"
    fi
    local i=0
    while IFS= read -r pod; do
      i=$((i + 1))
      local name server_rc=0
      name=$(jq -r '.metadata.name' <<<"$pod")
      jq 'del(.metadata.namespace)' <<<"$pod" >"$work/pod.json"
      kubectl create --dry-run=server -n team-a -o json -f "$work/pod.json" >"$work/server.json" 2>"$work/server.err" || server_rc=$?
      if [ "$offline_rc" = 3 ] && grep -qF "Pod team-a/$name:" "$work/offline.err"; then
        local message
        message=$(grep -F "Pod team-a/$name:" "$work/offline.err" | head -n 1 | sed "s#^Pod team-a/$name: ##")
        if [ "$server_rc" != 0 ] && grep -qF -- "$message" "$work/server.err"; then
          _kvc_pass "$stem/$name: refused with the same message"
        else
          _kvc_fail "$stem/$name: refused offline, not the same through the API server" \
            "offline: $message" "server (exit $server_rc): $(head -c 600 "$work/server.err")"
        fi
        continue
      fi
      if [ "$server_rc" != 0 ]; then
        _kvc_fail "$stem/$name: admitted offline, refused through the API server" "$(head -c 600 "$work/server.err")"
        continue
      fi
      jq -cS "if .kind == \"List\" then .items[] else . end | select(.kind == \"Pod\" and .metadata.name == \"$name\") | $normalize" "$work/offline.json" >"$work/a"
      jq -cS "$normalize" "$work/server.json" >"$work/b"
      if cmp -s "$work/a" "$work/b"; then
        _kvc_pass "$stem/$name: the same injection through the API server"
      else
        _kvc_fail "$stem/$name: offline and server results differ" "offline: $(cat "$work/a")" "server:  $(cat "$work/b")"
      fi
    done <<<"$pods"
  done
  "$KVC_REPO_DIR/test/webhook/apply-with-status.sh" --delete "$clusterfile"
}

kubectl create namespace team-a --dry-run=client -o yaml | kubectl apply -f - >/dev/null
for group in default ascend single-tenant dtype-off; do
  replay_group "$group"
done
rm -rf "$work"
kvc_done
