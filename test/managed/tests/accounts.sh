#!/usr/bin/env bash
# What every account the install and the operator render may do, asked of the real API server
# (`kubectl auth can-i --as=`), and the store's one write to a Pod tried from the attacker's side:
# from inside a running leader Pod, with the token the kubelet mounted there, through the cluster
# network to the API server.
#   - the operator, the leader, the member and the namespace's default account: each can do what
#     docs/security.md lists and nothing next to it (another backend's or the operator's Lease,
#     Secrets, Pods of other namespaces, creating Pods);
#   - the leader's `patch pods` (it labels its own Pod mooncake.io/store-role=leader) is bound by
#     the ValidatingAdmissionPolicy kvcache-store-pod-self-label to its own Pod and that label:
#     patching the operator's Pod, another label, its own spec, or with a token bound to no Pod is
#     refused; setting the label on its own Pod is not;
#   - the store's Pods are hardened: the leader runs as uid 65532 on a read-only root filesystem
#     with no capabilities, the members without capabilities, and both still serve.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
kvc_init
kvc_require_real_nodes
b=store-accounts
ns=$KVC_SYSTEM_NAMESPACE
trap 'delete_backend $b; kvc_cleanup' EXIT

kvc_assert_ok "a managed backend is created (its election renders the leader and member accounts)" \
  managed_backend $b 256Mi
kvc_wait_for 240 "it is Ready with CAPACITY 512Mi" \
  bash -c "[ \"\$(kubectl get kvcb $b -o jsonpath='{.status.phase} {.status.capacity.total}')\" = 'Ready 512Mi' ]"
leader=$(store_pods $b leader)
operator_pod=$(kubectl -n "$ns" get pods -l app.kubernetes.io/name=kvcache-operator -o jsonpath='{.items[0].metadata.name}')

# can ACCOUNT VERB RESOURCE [NAMESPACE]: "yes" or "no", as the API server's authorizer answers.
can() {
  kubectl auth can-i --as="system:serviceaccount:$ns:$1" "$2" "$3" -n "${4:-$ns}" 2>/dev/null
}
# expect ACCOUNT ANSWER VERB RESOURCE [NAMESPACE]
expect() {
  kvc_assert_eq "$1 $3 $4${5:+ in $5}: $2" "$2" "$(can "$1" "$3" "$4" "${5:-}")"
}
op=kvcache-operator
expect $op yes create leases
expect $op yes patch pods
expect $op yes patch kvcachepoolbindings team-a
expect $op yes get secrets/kvcache-operator-webhook-tls
expect $op no get secrets/another-secret
expect $op yes patch networkpolicies
expect $op no patch networkpolicies team-a
expect $b-leader no delete networkpolicies
expect $op no create pods team-a
expect $op no patch pods team-a
expect $op no delete namespaces
expect $op no create clusterrolebindings
expect $op no create validatingadmissionpolicies
expect $op no delete validatingadmissionpolicybindings/kvcache-store-pod-self-label

expect $b-leader yes create leases
expect $b-leader yes update leases/$b-leader
expect $b-leader yes watch leases/$b-leader
expect $b-leader no update leases/kvcache-operator
expect $b-leader no get leases/another-backend-leader
expect $b-leader yes patch pods
expect $b-leader no get pods
expect $b-leader no create pods
expect $b-leader no delete pods
expect $b-leader no patch pods team-a
expect $b-leader no get secrets
expect $b-leader no get configmaps
expect $b-leader no patch deployments

expect $b-member yes get leases/$b-leader
expect $b-member no get leases/kvcache-operator
expect $b-member no update leases/$b-leader
expect $b-member no patch pods
expect $b-member no list pods

expect default no get pods
expect default no get leases
expect default no get secrets

# in_leader PYTHON...: runs Python inside the leader Pod (the store image has python3), where the
# kubelet mounted the leader account's token, bound to this Pod.
in_leader() { kubectl -n "$ns" exec "$leader" -c leader -- python3 -c "$1" "${@:2}"; }
# patch_from_leader POD MERGE-PATCH [TOKEN]: PATCHes POD through the in-cluster API address with
# the mounted token (or TOKEN); prints the HTTP status and the API server's message.
patch_from_leader() {
  in_leader '
import json, os, ssl, sys, urllib.request, urllib.error
pod, body = sys.argv[1], sys.argv[2]
sa = "/var/run/secrets/kubernetes.io/serviceaccount"
token = sys.argv[3] if len(sys.argv) > 3 else open(sa + "/token").read().strip()
url = "https://%s:%s/api/v1/namespaces/%s/pods/%s" % (os.environ["KUBERNETES_SERVICE_HOST"],
      os.environ["KUBERNETES_SERVICE_PORT"], open(sa + "/namespace").read().strip(), pod)
req = urllib.request.Request(url, data=body.encode(), method="PATCH", headers={
    "Authorization": "Bearer " + token, "Content-Type": "application/merge-patch+json"})
try:
    with urllib.request.urlopen(req, context=ssl.create_default_context(cafile=sa + "/ca.crt"), timeout=10) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code, json.load(e).get("message", ""))
' "$@"
}
label() { printf '{"metadata":{"labels":{"%s":%s}}}' "$1" "$2"; }

kvc_assert_eq "from the leader Pod: setting mooncake.io/store-role=leader on its own Pod is allowed" \
  "200" "$(patch_from_leader "$leader" "$(label mooncake.io/store-role '"leader"')")"
kvc_assert_contains "from the leader Pod: labelling the operator's Pod is refused, naming the bound Pod" \
  "may change only the Pod its token is bound to ($leader), not $operator_pod" \
  "$(patch_from_leader "$operator_pod" "$(label mooncake.io/store-role '"leader"')")"
kvc_assert_contains "from the leader Pod: another label on its own Pod is refused" \
  "may only set or clear the label mooncake.io/store-role=leader" \
  "$(patch_from_leader "$leader" "$(label app.kubernetes.io/instance '"other"')")"
kvc_assert_contains "from the leader Pod: another value of the store-role label is refused" \
  "may only set or clear the label mooncake.io/store-role=leader" \
  "$(patch_from_leader "$leader" "$(label mooncake.io/store-role '"member"')")"
kvc_assert_contains "from the leader Pod: changing its own spec (a deadline) is refused" \
  "may only set or clear the label mooncake.io/store-role=leader" \
  "$(patch_from_leader "$leader" '{"spec":{"activeDeadlineSeconds":5}}')"
unbound=$(kubectl -n "$ns" create token "$b-leader" --duration=10m)
kvc_assert_contains "a token of the leader account bound to no Pod may label no Pod, not even the leader's" \
  "may change only the Pod its token is bound to (none), not $leader" \
  "$(patch_from_leader "$leader" "$(label mooncake.io/store-role '"leader"')" "$unbound")"
kvc_assert_contains "the leader's root filesystem is read-only" "Read-only file system" \
  "$(in_leader 'open("/tmp/probe", "w")' 2>&1)"
kvc_assert_eq "the leader still holds the store-role label" "leader" \
  "$(kubectl -n "$ns" get pod "$leader" -o jsonpath='{.metadata.labels.mooncake\.io/store-role}')"

# The hardened Pods, as the real nodes run them.
kvc_assert_eq "the leader runs as uid 65532 (/proc/self/status)" "65532" \
  "$(in_leader 'print(open("/proc/self/status").read().split("Uid:")[1].split()[0])')"
kvc_assert_eq "with no effective capability" "0000000000000000" \
  "$(in_leader 'print([l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff:")][0])')"
kvc_assert_eq "under the runtime's default seccomp profile (Seccomp: 2, filter)" "2" \
  "$(in_leader 'print([l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")][0])')"
member=$(store_pods $b member-0 | head -1)
kvc_assert_eq "a member runs with no effective capability" "0000000000000000" \
  "$(kubectl -n "$ns" exec "$member" -- python3 -c 'print([l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff:")][0])')"
kvc_assert_contains "and on a read-only root filesystem" "Read-only file system" \
  "$(kubectl -n "$ns" exec "$member" -- python3 -c 'open("/probe", "w")' 2>&1)"
kvc_assert_eq "the backend is still Ready (the hardened store serves)" "Ready" "$(kvcb_field $b '{.status.phase}')"
kvc_done
