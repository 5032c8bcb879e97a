#!/usr/bin/env bash
# The main job on its embedded default: a local Kubernetes cluster (built from Go modules) with
# two real nodes (kubelet + containerd) and fake GPU nodes (kwok), the project's images built here
# and imported into the nodes, and kvcache-operator installed in-cluster from the project's own
# manifests (`kubectl apply -k` of deploy/overlays/local, pinned to this build). It then runs the
# walkthrough on it: Step 1's managed KVCacheBackend (its leader and two members run Mooncake from
# the store image on the real nodes; CAPACITY is what they registered), Step 4's standbys, Steps 2
# and 6 (a pool and three Bindings, whose grants the controllers read from that master), Steps 3
# and 6's ModelDeployments (their role Deployments on the fake GPU nodes, CacheAttached read from
# their own status), the reuse probe (kvcache probe: one replica reads what another wrote, another
# tenant reads none of it, a later run finds what was kept, and a probe that cannot reach the
# master says so), kvcache status and diagnose over all of it, a vLLM Pod, an SGLang Pod and one that is refused, and
# the monitoring kit scraped by a real Prometheus; prints what happened, and leaves everything running.
#
# Usage: scripts/run.sh          set up (the first run builds the cluster: ~15-25 min), run the demo
#        scripts/run.sh down     tear it all down (and restore every host setting the nodes changed)
# State lives in $KVC_DEMO_DIR (default ~/.cache/kvcache-operator/demo).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KVC_BUILD_DIR:-$root/build}
demo=${KVC_DEMO_DIR:-${KVC_CACHE_DIR:-$HOME/.cache/kvcache-operator}/demo}
export KVC_CLUSTER_DIR=$demo/cluster

banner() { printf '\n\033[1m=== %s\033[0m\n' "$*"; }

if [ "${1:-}" = down ]; then
  "$root/test/cluster/cluster.sh" down "$KVC_CLUSTER_DIR" || true
  echo "demo stopped; its logs are in $demo"
  exit 0
fi

banner "setting up this machine (Debian packages, cluster binaries, Mooncake wheel)"
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja >/dev/null
cmake --build "$build" -j "$(nproc)" --target kvcache
kvcache=$build/src/cmd/kvcache

banner "a local cluster: control plane, 2 real nodes (kubelet + containerd), kube-proxy, CoreDNS, 2 fake GPU nodes"
"$root/test/cluster/cluster.sh" up "$KVC_CLUSTER_DIR"
# shellcheck disable=SC1091
. "$KVC_CLUSTER_DIR/env"

banner "kvcache-operator installed in-cluster: this build's images (no daemon, no registry; cached by content) imported into the real nodes, kubectl apply -k deploy/overlays/local pinned to them"
"$root/deploy/overlays/local/install.sh" "$kvcache" "$demo"
# shellcheck disable=SC1091
. "$demo/images.env"
kubectl get pods -n gpustack-system -o wide

banner "Step 1: KVCacheBackend mooncake-dram, managed (scaled to this machine: nodeSelector {type: real}, 512Mi a member)"
# The seed's kubernetes.io/os: linux also matches the fake GPU nodes, where no member could run.
sed -e 's|kubernetes.io/os: linux|type: real|' -e 's|capacityPerMember: 8Gi|capacityPerMember: 512Mi|' \
  "$root/examples/walkthrough/step1-backend.yaml" | kubectl apply --server-side -f - >/dev/null
for _ in $(seq 1 240); do
  [ "$(kubectl get kvcb mooncake-dram -o jsonpath='{.status.phase} {.status.capacity.total}')" = "Ready 1Gi" ] && break
  sleep 1
done
# CAPACITY is read from the store: both members registered 512Mi.
kubectl get kvcb mooncake-dram
kubectl get kvcb mooncake-dram -o json | jq -r '.status.conditions[] | "  \(.type)=\(.status) \(.reason): \(.message)"'
kubectl -n gpustack-system get deploy,ds,pods -l app.kubernetes.io/instance=mooncake-dram -o wide

banner "Step 4: high availability, one edit (leader.replicas: 3) -> 3 desired / 1 ready"
kubectl patch kvcb mooncake-dram --type=merge -p '{"spec":{"connection":{"managed":{"leader":{"replicas":3}}}}}' >/dev/null
# Not `kubectl rollout status`: it waits for every replica to be available, and standbys never
# are. RolloutComplete is the backend's own answer (the Deployment's generation observed too).
kubectl wait --for=jsonpath='{.status.observedGeneration}'=2 --timeout=60s kvcb/mooncake-dram >/dev/null
kubectl wait --for=condition=RolloutComplete --timeout=180s kvcb/mooncake-dram >/dev/null
kubectl -n gpustack-system get deploy mooncake-dram-leader
kubectl get kvcb mooncake-dram -o json | jq -r '.status.conditions[] | select(.type == "ElectionObserved" or .type == "RolloutComplete") | "  \(.type)=\(.status) \(.reason): \(.message)"'

banner "Steps 2 and 6: pool shared-dram on mooncake-dram, Bindings team-a, team-b and qwen-fp8"
for ns in team-a team-b; do
  kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
done
# Step 2 (pool shared-dram, 16Gi; Binding team-a/team-a, 8Gi) and Step 6 (team-b/team-b, 8Gi;
# team-a/qwen-fp8, 4Gi), as written: the three ceilings ask for 20Gi against the pool's 16Gi
# (QuotaWithinTotal=False/Oversubscribed, a report), and the master recuts the grants against the
# 1Gi its two members mounted, in proportion to each ceiling.
kubectl apply --server-side -f "$root/examples/walkthrough/step2-pool-binding.yaml" >/dev/null
kubectl apply --server-side -f "$root/examples/walkthrough/step6-team-b.yaml" >/dev/null
kubectl create --dry-run=client -o json -f "$root/examples/walkthrough/step6-qwen-fp8.yaml" |
  jq 'if .kind == "List" then .items[] else . end | select(.kind == "KVCachePoolBinding")' |
  kubectl apply --server-side -f - >/dev/null
kubectl wait --for=jsonpath='{.status.phase}'=Ready --timeout=120s kvcb/mooncake-dram kvcp/shared-dram >/dev/null
kubectl -n team-a wait --for=condition=QuotaGranted --timeout=60s kvcpb/team-a kvcpb/qwen-fp8 >/dev/null
kubectl -n team-b wait --for=condition=QuotaGranted --timeout=60s kvcpb/team-b >/dev/null
kubectl get kvcb,kvcp,kvcpb -A
echo
kubectl get kvcp shared-dram -o json | jq -r '.status.conditions[] | "  \(.type)=\(.status) \(.reason): \(.message)"'
echo
# The admin port takes mutual TLS only: the operator's own client certificate, from its Secret;
# the certificate names the Service, reached here through its ClusterIP.
admin=mooncake-dram-leader.gpustack-system.svc:9003
cluster_ip=$(kubectl -n gpustack-system get service mooncake-dram-leader -o jsonpath='{.spec.clusterIP}'):9003
store_status=("$kvcache" store status --admin "$admin" --connect-to "$cluster_ip"
  --tls-secret gpustack-system/kvcache-store-operator-client)
"${store_status[@]}" | sed -n '/TENANT LEDGER/,$p'

banner "the reuse probe: kvcache probe, through the webhook, the Pod network and the real store"
# Probe Pods run the store's Python client on the real nodes; a namespace here sends its Pods to
# the fake nodes unless it opts out (PodNodeSelector), so team-b opts out, and team-a only while its
# probe is created (its engine Pods below belong on the fake GPU nodes).
kubectl annotate namespace team-b --overwrite scheduler.alpha.kubernetes.io/node-selector= >/dev/null
probe=("$kvcache" probe --kubeconfig "$KUBECONFIG" --node-selector type=real --seed walkthrough)
echo "$ ${probe[*]} -n team-b --binding team-b --replicas 2 --keep-blocks"
"${probe[@]}" -n team-b --binding team-b --replicas 2 --keep-blocks 2>/dev/null || true
echo
echo "another Binding (team-a/team-a: another tenant), the same seed: none of team-b's blocks"
kubectl annotate namespace team-a --overwrite scheduler.alpha.kubernetes.io/node-selector= >/dev/null
"${probe[@]}" -n team-a --binding team-a --replicas 1 2>/dev/null || true
kubectl annotate namespace team-a scheduler.alpha.kubernetes.io/node-selector- >/dev/null
echo
echo "team-b again, the same seed: the blocks the first run kept are found; then they are removed"
"${probe[@]}" -n team-b --binding team-b --replicas 2 2>/dev/null || true
echo
echo "a namespace whose Pods may reach nothing but DNS: the probe fails, naming the step and the check"
kubectl -n team-b apply -f - >/dev/null <<'YAML'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: demo-egress-dns-only}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress: [{ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]}]
YAML
"${probe[@]}" -n team-b --binding team-b --replicas 1 --deadline 20 2>/dev/null || echo "(exit $?)"
kubectl -n team-b delete networkpolicy demo-egress-dns-only >/dev/null

banner "Steps 3 and 6: ModelDeployments qwen-chat (Binding team-a) and qwen-chat-fp8 (Binding qwen-fp8), as written"
# The engine Pods land on the fake GPU nodes (kwok): no engine can run here, but every rendered
# Deployment, its client configuration and the deployment's own status are real.
kubectl apply --server-side -f "$root/examples/walkthrough/step3-modeldeployment.yaml" >/dev/null
kubectl apply --server-side -f "$root/examples/walkthrough/step6-qwen-fp8.yaml" >/dev/null
kubectl -n team-a wait --for=jsonpath='{.status.phase}'=Ready --timeout=180s md/qwen-chat md/qwen-chat-fp8 >/dev/null
kubectl -n team-a get md
echo
echo "$ kubectl -n team-a get md qwen-chat -o jsonpath='{.status.conditions[?(@.type==\"CacheAttached\")]}'"
kubectl -n team-a get md qwen-chat -o jsonpath='{.status.conditions[?(@.type=="CacheAttached")]}'; echo
kubectl -n team-a get md qwen-chat -o json | jq -c '{kvCache: .status.kvCache, roles: .status.roles}'
echo "qwen-chat-fp8-server args (the dtype from Binding qwen-fp8):"
kubectl -n team-a get deploy qwen-chat-fp8-server -o jsonpath='{.spec.template.spec.containers[0].args}'; echo
kubectl -n team-a get kvcpb team-a -o jsonpath='{"Binding team-a status.usedBy: "}{.status.usedBy}{"\n"}'

banner "submitting a vLLM Pod, an SGLang Pod and a Pod launched through bash -lc (namespace team-a)"
kubectl -n team-a delete pod vllm-chat sglang-chat vllm-scripted --ignore-not-found --wait=false >/dev/null 2>&1 || true
kubectl create -f "$root/examples/demo/pods.yaml" 2>"$demo/refused.txt" || true

banner "vllm-chat: what the webhook wrote"
kubectl -n team-a get pod vllm-chat -o json | jq '{
  injected: (.metadata.annotations["kvcache.gpustack.ai/injected"] | fromjson),
  "client-config (projected to /etc/gpustack/kvcache/mooncake.json)":
    (.metadata.annotations["kvcache.gpustack.ai/client-config"] | fromjson),
  args: .spec.containers[0].args,
  env: [.spec.containers[0].env[] | {(.name): (if .valueFrom then "fieldRef " + .valueFrom.fieldRef.fieldPath else (.value // "") end)}] | add,
  volume: [.spec.volumes[] | select(.name == "gpustack-kvcache-config")][0]}'

banner "sglang-chat: what the webhook wrote"
kubectl -n team-a get pod sglang-chat -o json | jq '{
  injected: (.metadata.annotations["kvcache.gpustack.ai/injected"] | fromjson),
  args: .spec.containers[0].args,
  env: [.spec.containers[0].env[] | {(.name): (if .valueFrom then "fieldRef " + .valueFrom.fieldRef.fieldPath else (.value // "") end)}] | add}'

banner "vllm-scripted: refused at admission, with the fix"
cat "$demo/refused.txt"
kubectl -n team-a get pods -o wide

banner "kvcache status: the whole walkthrough as one tree; kvcache diagnose: the Troubleshooting table walked"
"$kvcache" status --kubeconfig "$KUBECONFIG"
echo
"$kvcache" diagnose --kubeconfig "$KUBECONFIG" || true

banner "the monitoring kit, scraped by a real Prometheus (built from its Go module) in namespace monitoring"
# The Prometheus Operator's CRDs store the kit (deploy/monitoring); Prometheus runs with the
# configuration that operator would generate from it (test/monitoring/prometheus.sh). Two engine
# Pods on Binding team-b use the store and count their lookups as vLLM does, so that the
# dashboard's engine panels have something to show (the demo's engines run on fake GPU nodes).
# shellcheck source=../test/managed/lib.sh
. "$root/test/managed/lib.sh"
# shellcheck source=../test/cluster/paths.sh
. "$root/test/cluster/paths.sh"
# shellcheck source=../test/monitoring/prometheus.sh
. "$root/test/monitoring/prometheus.sh"
kit=$demo/monitoring
kubectl -n team-b delete pod engine-0 engine-1 --ignore-not-found >/dev/null 2>&1 || true  # a rerun's
steady_engines team-b team-b "$(kubectl -n gpustack-system get configmap gpustack-settings -o jsonpath='{.data.kv-cache-backend-image}')"
kit_crds
kit_render "$kit"
kubectl apply --server-side -f "$kit/kit.yaml" >/dev/null
kubectl create namespace "$KVC_KIT_NAMESPACE" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl annotate namespace "$KVC_KIT_NAMESPACE" --overwrite scheduler.alpha.kubernetes.io/node-selector= >/dev/null
prometheus_config "$kit"
kubectl -n "$KVC_KIT_NAMESPACE" delete pod prometheus --ignore-not-found >/dev/null 2>&1 || true  # a rerun's, with its old config
prometheus_up "$kit" "$(prometheus_image)"
for _ in $(seq 1 120); do prometheus_ready && break; sleep 1; done
# Two scrapes and two rule evaluations (30 s apart) before a rate means anything; the operator
# reads the engines' counters once a resync.
for _ in $(seq 1 180); do rules_ok && [ -z "$(dashboard_empty)" ] && break; sleep 2; done
echo "targets (job, pod, health):"
prom /api/v1/targets | jq -r '.data.activeTargets[] | "  \(.labels.job)  \(.labels.pod)  \(.health)\(if .health == "down" then "  (" + .lastError + ")" else "" end)"' | sort
echo "  (the ModelDeployment roles run on the fake GPU nodes, where no engine serves: down by design here)"
echo "rules: $(prom /api/v1/rules | jq -r '[.data.groups[].rules[]] | "\(map(select(.health == "ok")) | length) of \(length) evaluate without error; firing: \(map(select(.state == "firing") | .name) | unique | join(", ") | if . == "" then "none" else . end)"')"
empty=$(dashboard_empty)
echo "dashboard: $(( $(dashboard_queries | wc -l) - $(grep -c . <<<"$empty" || true) )) of $(dashboard_queries | wc -l) queries return series${empty:+; without:}"
[ -z "$empty" ] || sed 's/^/  /' <<<"$empty"
echo "team-b's engines, 5-minute hit ratio: $(prom "/api/v1/query?query=binding:kvcache_engine_hit_ratio:rate5m" | jq -r '[.data.result[] | "\(.metric.namespace)/\(.metric.binding) \(.value[1] | tonumber * 1000 | round / 1000)"] | join(", ")')"

banner "left running"
kubectl get nodes -L type
echo
kubectl get all -n gpustack-system
cat <<TXT

  export KUBECONFIG=$KUBECONFIG
  kubectl get kvcb,kvcp,kvcpb -A                    # what the controllers read from the master
  kubectl describe kvcb mooncake-dram               # the store: conditions, members, endpoints
  kubectl describe kvcp shared-dram                 # every condition, with its reason
  kubectl -n gpustack-system get pods -l app.kubernetes.io/instance=mooncake-dram -o wide
  kubectl -n gpustack-system logs deploy/kvcache-operator   # the operator (2 replicas, one leads)
  kubectl -n team-a get md                          # the ModelDeployments and their phase
  kubectl -n team-a describe md qwen-chat           # CacheAttached and the other conditions
  kubectl -n team-a get pods -o wide                # the injected Pods (on the fake GPU nodes)
  kubectl -n team-a get events.events.k8s.io        # KVCacheInjected / KVCacheInjectionRefused
  ${store_status[*]}
                                                    # the master's own view (mutual TLS)
  $kvcache check-inject -f examples/demo/pods.yaml --kubeconfig \$KUBECONFIG
  $kvcache status --kubeconfig \$KUBECONFIG          # backend -> pools -> Bindings -> workloads
  $kvcache diagnose --kubeconfig \$KUBECONFIG        # the Troubleshooting table, walked
  $kvcache probe -n team-b --binding team-b --kubeconfig \$KUBECONFIG --node-selector type=real
                                                    # two replicas reuse each other's blocks
  kubectl -n monitoring port-forward pod/prometheus 9090   # Prometheus: the kit's targets, rules, alerts
  test/cluster/cluster.sh status $KVC_CLUSTER_DIR   # every process, node and the bridge
  scripts/run.sh down                               # tear it all down, host settings restored
TXT
