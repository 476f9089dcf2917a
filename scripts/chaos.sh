#!/usr/bin/env bash
# `npm run chaos`: the chaos suite (bench/chaos.ts) with its own setup: system tools, npm
# dependencies, the cached components including the upstream Go csi-resizer, and our compiled
# build; flags pass through (e.g. `npm run chaos -- --faults driver-kill --n 30`; see `--help`).
#
# `npm run chaos -- --node [flags]`: the faults on the one-node cluster instead (kubelet,
# containerd, the whole node, the resizer's container and pod, the driver, the API server), with
# real volumes and their data checked, for our image and upstream's (e2e/node-chaos/main.ts; see
# `npm run chaos -- --node --help` and docs/e2e.md, "Faults on the node"). It needs root, and
# builds the node's components and images first (e2e/prepare.sh, cached).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh
use_node_runtime

node_mode=no
args=()
for a in "$@"; do
  if [ "$a" = --node ]; then node_mode=yes; else args+=("$a"); fi
done

if [ "$node_mode" = yes ]; then
  for a in "${args[@]}"; do
    if [ "$a" = --help ] || [ "$a" = -h ]; then exec node --import tsx e2e/node-chaos/main.ts --help; fi
  done
  [ "$(id -u)" = 0 ] || { echo "npm run chaos -- --node needs root (network namespaces, mounts, cgroups)" >&2; exit 1; }
  bash scripts/setup.sh --no-components --image-tools --arch=amd64
  source e2e/prepare.sh
  echo "== node chaos"
  exec node --import tsx e2e/node-chaos/main.ts "${args[@]}"
fi

bash scripts/setup.sh --with-upstream
echo "== build"
npm run build --silent
echo "== chaos"
exec node --import tsx bench/chaos.ts "${args[@]}"
