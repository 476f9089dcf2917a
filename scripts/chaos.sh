#!/usr/bin/env bash
# `npm run chaos`: the chaos suite (bench/chaos.ts) with its own setup: system tools, npm
# dependencies, the cached components including the upstream Go csi-resizer, and our compiled
# build; flags pass through (e.g. `npm run chaos -- --faults driver-kill --n 30`; see `--help`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh
use_node_runtime

bash scripts/setup.sh --with-upstream
echo "== build"
npm run build --silent
echo "== chaos"
exec node --import tsx bench/chaos.ts "$@"
