#!/usr/bin/env bash
# `npm run demo`: the resizer end to end on a local control plane (scripts/demo.ts says what it
# shows). The first run builds etcd, kube-apiserver and the CSI mock driver from source, which
# takes many minutes on a small machine; later runs find them cached and start in seconds.
# `npm run demo -- --node` shows it on a real node instead (e2e/demo-node.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh

start=$SECONDS
# --node: the same resizer on a real one-node cluster (kubelet, containerd), e2e/demo-node.ts.
if [ "${1:-}" = "--node" ]; then
  [ "$(id -u)" = 0 ] || { echo "npm run demo -- --node needs root (it starts a node: network namespace, mounts, cgroups)" >&2; exit 1; }
  use_node_runtime
  bash scripts/setup.sh --no-components --image-tools --arch=amd64
  E2E_COMPONENTS_ENV=$(bash e2e/build.sh | tail -n1)
  E2E_IMAGES_DIR=$(bash e2e/images.sh | tail -n1)
  export E2E_COMPONENTS_ENV E2E_IMAGES_DIR
  echo "== node components and images ready in $((SECONDS - start))s"
  exec node --import tsx e2e/demo-node.ts
fi
if [ ! -f "${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}/bin/components.env" ]; then
  echo "== first run: building the test components (etcd, kube-apiserver, CSI mock driver); this takes a while, progress follows"
fi
use_node_runtime
echo "== runtime: Node.js $(node --version)"
bash scripts/setup.sh
echo "== setup done in $((SECONDS - start))s"
exec node --import tsx scripts/demo.ts
