#!/usr/bin/env bash
# Writes DIR/kustomization.yaml: this overlay with the operator image pinned to REFERENCE (the
# content tag images/build.sh gave the build it imported, KVC_IMAGE_OPERATOR_PINNED), so that a
# rebuilt binary rolls the Deployment. Then: kubectl apply --server-side -k DIR.
# usage: pin.sh DIR REFERENCE
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${1:?usage: pin.sh DIR REFERENCE}
reference=${2:?usage: pin.sh DIR REFERENCE}
mkdir -p "$dir"
cat >"$dir/kustomization.yaml" <<KUSTOMIZATION
# deploy/overlays/local with the operator image $reference (written by pin.sh).
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
sortOptions: {order: fifo}
resources: [$(realpath --relative-to="$dir" "$here")]
images: [{name: kvcache-operator/kvcache, newName: "${reference%:*}", newTag: "${reference##*:}"}]
KUSTOMIZATION
