# shellcheck shell=bash
# shellcheck disable=SC2034  # every variable here is used by the scripts that source it
# Sourced by build.sh and cluster.sh: pinned versions and where the built tools live.
# The cache is outside the repository; override its root with KVC_CACHE_DIR.
_kvc_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
. "$_kvc_here/versions.env"
KVC_CACHE_DIR=${KVC_CACHE_DIR:-${HOME:-/root}/.cache/kvcache-operator}
KVC_TOOLS_DIR=$KVC_CACHE_DIR/tools
KVC_K8S_DIR=$KVC_TOOLS_DIR/kubernetes-$KVC_K8S_VERSION
KVC_ETCD_DIR=$KVC_TOOLS_DIR/etcd-$KVC_ETCD_VERSION
KVC_KWOK_DIR=$KVC_TOOLS_DIR/kwok-$KVC_KWOK_VERSION
KVC_COREDNS_DIR=$KVC_TOOLS_DIR/coredns-$KVC_COREDNS_VERSION
KVC_COREDNS_BIN=$KVC_COREDNS_DIR/bin
KVC_CRICTL_DIR=$KVC_TOOLS_DIR/crictl-$KVC_CRICTL_VERSION
KVC_CRICTL_BIN=$KVC_CRICTL_DIR/bin
KVC_HELM_DIR=$KVC_TOOLS_DIR/helm-$KVC_HELM_VERSION
KVC_HELM_BIN=$KVC_HELM_DIR/bin
KVC_KUBE_ROUTER_DIR=$KVC_TOOLS_DIR/kube-router-$KVC_KUBE_ROUTER_VERSION
KVC_KUBE_ROUTER_BIN=$KVC_KUBE_ROUTER_DIR/bin
KVC_PROMETHEUS_DIR=$KVC_TOOLS_DIR/prometheus-$KVC_PROMETHEUS_VERSION
KVC_PROMETHEUS_BIN=$KVC_PROMETHEUS_DIR/bin
KVC_PROMETHEUS_CRDS=$KVC_PROMETHEUS_DIR/crds-$KVC_PROMETHEUS_OPERATOR_VERSION
KVC_K8S_BIN=$KVC_K8S_DIR/bin
KVC_ETCD_BIN=$KVC_ETCD_DIR/bin
KVC_KWOK_BIN=$KVC_KWOK_DIR/bin
KVC_KWOK_STAGES=$KVC_KWOK_DIR/stages/kwok-stages.yaml
# Bump when the build recipe changes in a way that must invalidate cached binaries.
KVC_BUILD_RECIPE=1
unset _kvc_here
