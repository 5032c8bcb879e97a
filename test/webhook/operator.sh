#!/usr/bin/env bash
# Runs `kvcache operator` against the local control plane with its webhooks registered.
#
#   operator.sh up KVCACHE_BINARY DIR     start it (serving cert signed by the cluster CA, IP SAN
#                                         127.0.0.1), register the webhooks, wait until a labelled
#                                         canary Pod comes back mutated; writes DIR/operator.env
#   operator.sh down DIR                  unregister the webhooks and stop it (by pid)
#   operator.sh rotate DIR                write a new serving certificate over the old files
#   operator.sh register DIR [URL]        (re)register the webhook configurations, pointing at URL
#
# Needs the cluster environment: KVC_CLUSTER_DIR (with env, KUBECONFIG, KVC_CA_CERT, KVC_CA_KEY).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
step=${1:?usage: operator.sh up|down|rotate|register ...}
log() { printf '[operator.sh %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [ "${KVC_SKIP_INTEGRATION:-0}" = 1 ]; then
  echo "*** SKIPPED: operator fixture '$step' — KVC_SKIP_INTEGRATION=1 is set ***"
  exit 77
fi
# shellcheck disable=SC1091
. "${KVC_CLUSTER_DIR:?KVC_CLUSTER_DIR is required}/env"
# shellcheck source=test/webhook/lib.sh
. "$HERE/lib.sh"

# shellcheck source=test/cluster/lib.sh
. "$HERE/../cluster/lib.sh"  # kvc_free_port

# sign DIR SERIAL: a serving certificate for 127.0.0.1 signed by the cluster CA.
sign() {
  local dir=$1
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kvcache-operator-webhook" \
    -keyout "$dir/new.key" -out "$dir/new.csr" 2>/dev/null
  openssl x509 -req -in "$dir/new.csr" -CA "$KVC_CA_CERT" -CAkey "$KVC_CA_KEY" -CAcreateserial \
    -days 365 -out "$dir/new.crt" \
    -extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth') 2>/dev/null
  # Key first, then the certificate, each by rename: the server reloads a consistent pair.
  mv "$dir/new.key" "$dir/tls.key"
  mv "$dir/new.crt" "$dir/tls.crt"
  rm -f "$dir/new.csr"
}

# Under test, the pool/Binding validation and the controllers see only the quota suites'
# objects (labelled); the demo sets both selectors empty: every object.
QUOTA_SELECTOR_LABEL=kvcache-test.gpustack.ai/validate
QUOTA_OBJECT_SELECTOR=${KVC_OPERATOR_QUOTA_OBJECT_SELECTOR-"{matchLabels: {\"$QUOTA_SELECTOR_LABEL\": \"true\"}}"}
register() {
  local dir=$1 url=$2
  sed -e "s#@URL@#$url#" -e "s#@CA_BUNDLE@#$(base64 -w0 <"$KVC_CA_CERT")#" \
    -e "s#@QUOTA_OBJECT_SELECTOR@#$QUOTA_OBJECT_SELECTOR#" \
    "$HERE/webhooks.yaml.in" >"$dir/webhooks.yaml"
  kubectl apply -f "$dir/webhooks.yaml" >/dev/null
}

case $step in
  up)
    binary=${2:?usage: operator.sh up KVCACHE_BINARY DIR}
    dir=${3:?usage: operator.sh up KVCACHE_BINARY DIR}
    mkdir -p "$dir"
    if [ -s "$dir/operator.env" ]; then
      # shellcheck disable=SC1091
      . "$dir/operator.env"
      if kill -0 "$KVC_OPERATOR_PID" 2>/dev/null; then
        # Only the very binary asked for: a rebuilt one replaces the file, and the old process's
        # /proc/PID/exe then reads "... (deleted)", so tests never run against stale code.
        if [ "$(readlink "/proc/$KVC_OPERATOR_PID/exe")" = "$(readlink -f "$binary")" ]; then
          log "reusing the operator (pid $KVC_OPERATOR_PID) on port $KVC_WEBHOOK_PORT"
          exit 0
        fi
        log "the running operator (pid $KVC_OPERATOR_PID) is not $binary as built now: restarting"
        kill "$KVC_OPERATOR_PID" 2>/dev/null || true
        for _ in $(seq 1 30); do kill -0 "$KVC_OPERATOR_PID" 2>/dev/null || break; sleep 1; done
      fi
    fi
    sign "$dir"
    port=$(kvc_free_port)
    health=$(kvc_free_port)
    kubectl create namespace gpustack-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
    # Its controllers reconcile only objects labelled kvcache-test.gpustack.ai/reconcile=true,
    # so that the hand-written statuses of the canary and of the golden corpus stay as written,
    # and tests running alongside (kube_it, with ctest -j) own their objects.
    # KVC_OPERATOR_SELECTOR="" (the demo) reconciles every object, and then there is no canary:
    # its hand-written status would be reconciled away.
    watch=()
    selector=${KVC_OPERATOR_SELECTOR-kvcache-test.gpustack.ai/reconcile=true}
    if [ -n "$selector" ]; then
      watch=(--selector "$selector")
      # The canary's cluster state: a Binding whose pool and backend resolve.
      kubectl create namespace kvcache-canary --dry-run=client -o yaml | kubectl apply -f - >/dev/null
      "$HERE/apply-with-status.sh" "$HERE/canary-cluster.yaml"
      ready_check=kvc_canary_injected
    else
      ready_check=kvc_webhook_answers
    fi
    setsid "$binary" operator --kubeconfig "$KUBECONFIG" "${watch[@]}" \
      --webhook-address 127.0.0.1 --webhook-port "$port" \
      --tls-cert-file "$dir/tls.crt" --tls-key-file "$dir/tls.key" \
      --health-addr "127.0.0.1:$health" --metrics-addr "127.0.0.1:$health" \
      --identity "test-$$" --log-level info \
      </dev/null >"$dir/operator.log" 2>&1 &
    pid=$!
    cat >"$dir/operator.env" <<ENV
KVC_OPERATOR_PID=$pid
KVC_WEBHOOK_PORT=$port
KVC_WEBHOOK_URL=https://127.0.0.1:$port
KVC_OPERATOR_METRICS_URL=http://127.0.0.1:$health/metrics
KVC_OPERATOR_HEALTH=127.0.0.1:$health
KVC_OPERATOR_DIR=$dir
KVC_OPERATOR_BINARY=$binary
ENV
    for _ in $(seq 1 60); do
      curl -sf --cacert "$KVC_CA_CERT" "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
      kill -0 "$pid" 2>/dev/null || { log "the operator exited:"; tail -n 40 "$dir/operator.log" >&2; exit 1; }
      sleep 1
    done
    register "$dir" "https://127.0.0.1:$port"
    # The API server picks configurations up through an informer: wait for the canary.
    for _ in $(seq 1 60); do
      "$ready_check" && { log "operator pid $pid serving webhooks on port $port"; exit 0; }
      sleep 1
    done
    log "the webhook never answered ($ready_check); operator log:"
    tail -n 40 "$dir/operator.log" >&2
    exit 1 ;;
  down)
    dir=${2:?usage: operator.sh down DIR}
    [ -s "$dir/operator.env" ] || exit 0
    # shellcheck disable=SC1091
    . "$dir/operator.env"
    kubectl delete mutatingwebhookconfiguration gpustack-worker-mutation --ignore-not-found >/dev/null || true
    kubectl delete validatingwebhookconfiguration gpustack-worker-validation --ignore-not-found >/dev/null || true
    # The canary's objects go with it: left behind, an operator that reconciles every object (an
    # install, later on this cluster) would take them in hand, and their master does not exist.
    kubectl delete namespace kvcache-canary --ignore-not-found --wait=false >/dev/null 2>&1 || true
    kubectl delete kvcachepool kvcache-canary --ignore-not-found --wait=false >/dev/null 2>&1 || true
    kubectl delete kvcachebackend kvcache-canary --ignore-not-found --wait=false >/dev/null 2>&1 || true
    kill "$KVC_OPERATOR_PID" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$KVC_OPERATOR_PID" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$KVC_OPERATOR_PID" 2>/dev/null || true
    rm -f "$dir/operator.env" ;;
  rotate)
    dir=${2:?usage: operator.sh rotate DIR}
    sign "$dir" ;;
  register)
    dir=${2:?usage: operator.sh register DIR [URL]}
    # shellcheck disable=SC1091
    . "$dir/operator.env"
    register "$dir" "${3:-$KVC_WEBHOOK_URL}"
    if [ -z "${3:-}" ]; then
      for _ in $(seq 1 60); do kvc_canary_injected && exit 0; sleep 1; done
      log "the canary Pod never came back mutated after re-registering"
      exit 1
    fi ;;
  *) echo "unknown step '$step'" >&2; exit 2 ;;
esac
