#!/usr/bin/env bash
# `npm run demo`: the resizer end to end on a local control plane (scripts/demo.ts says what it
# shows). The first run builds etcd, kube-apiserver and the CSI mock driver from source, which
# takes many minutes on a small machine; later runs find them cached and start in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh

start=$SECONDS
if [ ! -f "${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}/bin/components.env" ]; then
  echo "== first run: building the test components (etcd, kube-apiserver, CSI mock driver); this takes a while, progress follows"
fi
use_node_runtime
echo "== runtime: Node.js $(node --version)"
bash scripts/setup.sh
echo "== setup done in $((SECONDS - start))s"
exec node --import tsx scripts/demo.ts
