#!/usr/bin/env bash
# Writes DIR/kustomization.yaml: this overlay with the operator image pinned to REFERENCE (the
# content tag images/build.sh gave the build it imported, KVC_IMAGE_OPERATOR_PINNED), so that a
# rebuilt binary rolls the Deployment; with STORE-REFERENCE (KVC_IMAGE_STORE_PINNED) also the
# Setting kv-cache-backend-image, so that managed backends run the store image of this very build
# (a rebuilt one rolls them). Then: kubectl apply --server-side -k DIR.
# usage: pin.sh DIR REFERENCE [STORE-REFERENCE]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${1:?usage: pin.sh DIR REFERENCE [STORE-REFERENCE]}
reference=${2:?usage: pin.sh DIR REFERENCE [STORE-REFERENCE]}
store=${3:-}
mkdir -p "$dir"
settings=""
if [ -n "$store" ]; then
  settings="patches:
  - target: {kind: ConfigMap, name: gpustack-settings, namespace: gpustack-system}
    patch: |-
      - {op: add, path: /data/kv-cache-backend-image, value: \"$store\"}"
fi
cat >"$dir/kustomization.yaml" <<KUSTOMIZATION
# deploy/overlays/local with the operator image $reference (written by pin.sh).
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
sortOptions: {order: fifo}
resources: [$(realpath --relative-to="$dir" "$here")]
images: [{name: kvcache-operator/kvcache, newName: "${reference%:*}", newTag: "${reference##*:}"}]
$settings
KUSTOMIZATION
