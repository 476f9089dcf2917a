#!/usr/bin/env bash
# `npm run bench:node-local`: R node replicas with --node-deployment against one central resizer
# over the same N claims (bench/node-local.ts), with its own setup on the pinned runtime; flags pass
# through (e.g. `npm run bench:node-local -- --replicas 5 --n 200`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh
use_node_runtime

bash scripts/setup.sh
echo "== build"
npm run build --silent
echo "== node-local benchmark"
exec node --import tsx bench/node-local.ts "$@"
