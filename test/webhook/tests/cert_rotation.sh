#!/usr/bin/env bash
# The self-managed webhook certificate is rotated without a restart: with its Secret deleted, the
# in-cluster replicas issue a new CA and serving certificate, every replica serves the new one to
# new connections through the Service, the caBundles carry the new CA, and Pods keep being
# injected through the API server — while no operator Pod restarted.
. "$(dirname "$0")/../../cluster/lib.sh"
. "$(dirname "$0")/../lib.sh"
kvc_init
# shellcheck disable=SC1091
. "$KVC_OPERATOR_DIR/operator.env"
sys=$KVC_OPERATOR_NAMESPACE
secret=kvcache-operator-webhook-tls
service=kvcache-operator-webhook
ip=$(kubectl -n "$sys" get service "$service" -o jsonpath='{.spec.clusterIP}')
work=$(mktemp -d)
trap 'rm -rf "$work"; kvc_cleanup' EXIT
# serials: the serial each of 8 new connections through the Service is served (one per line,
# sorted, unique): the Service spreads them over the replicas.
serials() {
  for _ in 1 2 3 4 5 6 7 8; do
    openssl s_client -connect "$ip:443" -servername "$service.$sys.svc" </dev/null 2>/dev/null |
      openssl x509 -noout -serial 2>/dev/null
  done | sort -u
}
secret_serial() {
  kubectl -n "$sys" get secret "$secret" -o jsonpath='{.data.tls\.crt}' | base64 -d |
    openssl x509 -noout -serial
}
pods() {
  kubectl -n "$sys" get pods -l app.kubernetes.io/name=kvcache-operator \
    -o jsonpath='{range .items[*]}{.metadata.name}:{.status.containerStatuses[0].restartCount}{"\n"}{end}' | sort
}
before=$(serials)
before_pods=$(pods)
kvc_assert_eq "every replica serves the Secret's certificate" "$(secret_serial)" "$before"
old_ca=$(kubectl -n "$sys" get secret "$secret" -o jsonpath='{.data.ca\.crt}')
kvc_assert_ok "the certificate Secret is deleted" "$KVC_REPO_DIR/test/webhook/operator.sh" rotate "$KVC_OPERATOR_DIR"
kvc_wait_for 60 "a replica issues a new CA and serving certificate" bash -c \
  "ca=\$(kubectl -n $sys get secret $secret -o jsonpath='{.data.ca\\.crt}' 2>/dev/null); [ -n \"\$ca\" ] && [ \"\$ca\" != '$old_ca' ]"
new=$(secret_serial)
kvc_wait_for 90 "every replica serves the new certificate to new connections" \
  bash -c "$(declare -f serials); ip=$ip service=$service sys=$sys; [ \"\$(serials)\" = '$new' ]"
kvc_wait_for 60 "the caBundles carry the new CA" bash -c "
  ca=\$(kubectl -n $sys get secret $secret -o jsonpath='{.data.ca\\.crt}')
  [ \"\$(kubectl get mutatingwebhookconfiguration gpustack-worker-mutation -o jsonpath='{.webhooks[0].clientConfig.caBundle}')\" = \"\$ca\" ] &&
  [ \"\$(kubectl get validatingwebhookconfiguration gpustack-worker-validation -o jsonpath='{.webhooks[0].clientConfig.caBundle}')\" = \"\$ca\" ]"
kvc_wait_for 60 "the API server still reaches the webhook after the rotation" \
  kvc_canary_injected after-rotation
kvc_assert_eq "no operator Pod restarted (same Pods, same restart counts)" "$before_pods" "$(pods)"
kvc_done
