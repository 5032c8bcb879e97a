#!/usr/bin/env bash
# A serving certificate rotated on disk is picked up without a restart: the server presents the
# new certificate to new connections, and Pods keep being injected through the API server.
. "$(dirname "$0")/../../cluster/lib.sh"
. "$(dirname "$0")/../lib.sh"
kvc_init
# shellcheck disable=SC1091
. "$KVC_OPERATOR_DIR/operator.env"
serial() {
  openssl s_client -connect "127.0.0.1:$KVC_WEBHOOK_PORT" -CAfile "$KVC_CA_CERT" </dev/null 2>/dev/null |
    openssl x509 -noout -serial 2>/dev/null
}
before=$(serial)
kvc_assert_contains "the server presents a certificate" "serial=" "$before"
"$KVC_REPO_DIR/test/webhook/operator.sh" rotate "$KVC_OPERATOR_DIR"
file=$(openssl x509 -noout -serial -in "$KVC_OPERATOR_DIR/tls.crt")
kvc_wait_for 30 "new connections get the rotated certificate" bash -c "[ \"\$(openssl s_client -connect 127.0.0.1:$KVC_WEBHOOK_PORT -CAfile $KVC_CA_CERT </dev/null 2>/dev/null | openssl x509 -noout -serial)\" = '$file' ]"
kvc_assert_eq "the operator did not restart" "$KVC_OPERATOR_PID" "$(pgrep -f "webhook-port $KVC_WEBHOOK_PORT" | head -n 1)"
kvc_wait_for 30 "the API server still reaches the webhook after the rotation" \
  kvc_canary_injected after-rotation
kvc_done
