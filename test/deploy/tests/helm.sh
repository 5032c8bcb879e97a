#!/usr/bin/env bash
# The Helm chart's default render is the kustomize base, object for object (compared as JSON,
# order aside); both pass the real API server's validation (apply --dry-run=server); the
# cert-manager value renders what the cert-manager overlay renders.
set -uo pipefail
. "$(dirname "$0")/../../cluster/lib.sh"
kvc_init
root=$(cd "$(dirname "$0")/../../.." && pwd)
helm=$KVC_HELM_BIN/helm
[ -x "$helm" ] || { echo "FAIL: helm is not built ($helm; test/cluster/build.sh helm)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"; kvc_cleanup' EXIT

# objects FILE: the documents of FILE as one sorted JSON list (comments and key order aside).
objects() {
  python3 -c '
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
docs.sort(key=lambda d: (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]))
print(json.dumps(docs, indent=1, sort_keys=True))' "$1"
}

chart=$root/deploy/helm/kvcache-operator
kvc_assert_ok "helm lint passes" bash -c "'$helm' lint '$chart' 2>&1 | grep -v 'found symbolic link' >&2; exit \${PIPESTATUS[0]}"
"$helm" template kvcache-operator "$chart" --include-crds 2>/dev/null >"$work/helm.yaml"
kubectl kustomize "$root/deploy" >"$work/kustomize.yaml"
kvc_assert_eq "helm template (defaults) renders the objects kubectl kustomize deploy renders" "" \
  "$(diff <(objects "$work/kustomize.yaml") <(objects "$work/helm.yaml") | head -40)"
kvc_assert_eq "both render 20 objects" "20 20" \
  "$(grep -c '^kind:' "$work/kustomize.yaml") $(grep -c '^kind:' "$work/helm.yaml")"

"$helm" template kvcache-operator "$chart" --include-crds --set certificates.mode=cert-manager \
  2>/dev/null >"$work/helm-cm.yaml"
kubectl kustomize "$root/deploy/overlays/cert-manager" >"$work/kustomize-cm.yaml"
kvc_assert_eq "certificates.mode=cert-manager renders the cert-manager overlay" "" \
  "$(diff <(objects "$work/kustomize-cm.yaml") <(objects "$work/helm-cm.yaml") | head -40)"
kvc_assert_contains "a mode that does not exist is refused, naming the field" \
  "certificates.mode must be self-managed or cert-manager" \
  "$("$helm" template x "$chart" --set certificates.mode=vault 2>&1)"
kvc_assert_contains "values reach the Deployment (image, replicas)" "image: registry.example/kvcache:9.9" \
  "$("$helm" template x "$chart" --set image.repository=registry.example/kvcache --set image.tag=9.9 --set replicaCount=3 2>/dev/null)"

"$helm" template kvcache-operator "$chart" --include-crds --set monitoring.enabled=true \
  2>/dev/null >"$work/helm-mon.yaml"
kubectl kustomize "$root/deploy/overlays/monitoring" >"$work/kustomize-mon.yaml"
kvc_assert_eq "monitoring.enabled=true renders the monitoring overlay (the install and the kit)" "" \
  "$(diff <(objects "$work/kustomize-mon.yaml") <(objects "$work/helm-mon.yaml") | head -40)"
kvc_assert_eq "the kit adds 7 objects" "27 27" \
  "$(grep -c '^kind:' "$work/kustomize-mon.yaml") $(grep -c '^kind:' "$work/helm-mon.yaml")"
kvc_assert_eq "monitoring.labels reach every object of the kit" "7" \
  "$("$helm" template x "$chart" --set monitoring.enabled=true --set monitoring.labels.release=kps 2>/dev/null | grep -c 'release: kps')"
kvc_assert_contains "networkPolicy.monitoringNamespaceSelector reaches both policies" "2" \
  "$("$helm" template x "$chart" --set-json 'networkPolicy.monitoringNamespaceSelector={"matchLabels":{"team":"observability"}}' 2>/dev/null | grep -c 'team: observability')"
kvc_assert_ok "the kustomize base passes the API server's validation (apply --dry-run=server)" \
  kubectl apply --server-side --dry-run=server --force-conflicts -f "$work/kustomize.yaml"
kvc_assert_ok "the Helm render passes it too" \
  kubectl apply --server-side --dry-run=server --force-conflicts -f "$work/helm.yaml"
kvc_done
