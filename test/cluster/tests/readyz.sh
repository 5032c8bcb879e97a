#!/usr/bin/env bash
# The control plane is up: /readyz answers ok, the version is the pinned one, the fake nodes are
# Ready, and the controller manager has made the default ServiceAccount.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init

kvc_assert_eq "kubectl get --raw /readyz answers ok" "ok" "$(kubectl get --raw /readyz 2>&1)"
kvc_assert_eq "kubectl get --raw /livez answers ok" "ok" "$(kubectl get --raw /livez 2>&1)"
kvc_assert_eq "the server reports the pinned version" "$KVC_K8S_VERSION" \
  "$(kubectl get --raw /version 2>&1 | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p')"
kvc_assert_eq "kubectl is the pinned client from the tool cache" "$KVC_K8S_BIN/kubectl" "$(command -v kubectl)"
ready=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>&1 | grep -c '=True$')
kvc_assert_eq "at least two fake nodes are Ready (count >= 2)" "true" "$([ "$ready" -ge 2 ] && echo true || echo "false ($ready Ready)")"
kvc_assert_ok "the default ServiceAccount exists in default" kubectl -n default get serviceaccount default
ns=$(kvc_fresh_namespace readyz)
kvc_assert_ok "a fresh namespace gets its default ServiceAccount ($ns)" kubectl -n "$ns" get serviceaccount default
kvc_done
