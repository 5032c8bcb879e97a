#!/usr/bin/env bash
# Workloads progress on the kwok (fake) nodes: a 2-replica Deployment and a DaemonSet become Ready
# (kube-controller-manager + kube-scheduler + kwok), deleting their Pods completes and the
# controllers replace them, and deleting the namespace completes.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
ns=$(kvc_fresh_namespace workloads)
# Fake nodes only: the namespace is not opted in to real nodes, so its Pods get type=kwok
# (PodNodeSelector, test/cluster/nodes.sh) and the DaemonSet says so too.
nodes=$(kubectl get nodes -l type=kwok --no-headers 2>/dev/null | wc -l)

kvc_assert_ok "a 2-replica Deployment and a DaemonSet are created" kubectl -n "$ns" apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.invalid/kvcache/none:1}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: OnDelete}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {type: kwok}
      containers: [{name: agent, image: registry.invalid/kvcache/none:1}]
YAML

kvc_assert_ok "the Deployment rolls out (2/2 ready)" kubectl -n "$ns" rollout status deployment/web --timeout=120s
kvc_assert_eq "the Deployment reports 2 available replicas" "2" \
  "$(kubectl -n "$ns" get deployment web -o jsonpath='{.status.availableReplicas}' 2>&1)"
# OnDelete (like the operator's member DaemonSets), so `rollout status` does not apply: poll instead.
kvc_wait_for 120 "the DaemonSet schedules one Pod per node and all are ready" \
  bash -c "[ \"\$(kubectl -n '$ns' get daemonset agent -o jsonpath='{.status.numberReady}/{.status.desiredNumberScheduled}')\" = '$nodes/$nodes' ]"
kvc_assert_eq "the DaemonSet has one ready Pod per node" "$nodes/$nodes" \
  "$(kubectl -n "$ns" get daemonset agent -o jsonpath='{.status.numberReady}/{.status.desiredNumberScheduled}' 2>&1)"
kvc_assert_eq "every Pod is bound to a kwok node, Running and Ready" "" \
  "$(kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.phase} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>&1 \
     | grep -v -E ' kwok-node-[0-9]+ Running True$')"
kvc_assert_eq "Pods got an address from the kwok Pod CIDR" "" \
  "$(kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}' 2>&1 | grep -v '^10\.244\.')"

old=$(kubectl -n "$ns" get pods -o jsonpath='{.items[*].metadata.name}')
kvc_assert_ok "deleting every Pod completes (kwok's pod-delete stage)" \
  kubectl -n "$ns" delete pods --all --wait=true --timeout=90s
left=$(for p in $old; do kubectl -n "$ns" get pod "$p" -o name 2>/dev/null; done)
kvc_assert_eq "none of the deleted Pods is left" "" "$left"
# fresh_ready LABEL COUNT: COUNT Ready Pods with that label exist, none of them one deleted above.
fresh_ready() {
  local n
  n=$(kubectl -n "$ns" get pods -l "$1" -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' \
      | awk '$2 == "True" {print $1}' | grep -vxF -f <(tr ' ' '\n' <<<"$old") | grep -c .)
  [ "$n" = "$2" ]
}
kvc_wait_for 120 "the Deployment replaces both Pods with new Ready ones" fresh_ready app=web 2
kvc_wait_for 120 "the DaemonSet replaces its Pods with new Ready ones (one per node)" fresh_ready app=agent "$nodes"

kvc_assert_ok "scaling the Deployment to 0 removes its Pods" kubectl -n "$ns" scale deployment/web --replicas=0
kvc_wait_for 90 "no Pod of the Deployment is left" \
  bash -c "[ -z \"\$(kubectl -n '$ns' get pods -l app=web -o name)\" ]"

kvc_assert_ok "deleting the namespace completes (namespace controller + garbage collection)" \
  kubectl delete namespace "$ns" --wait=true --timeout=120s
kvc_done
