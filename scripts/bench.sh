#!/usr/bin/env bash
# `npm run bench`: the side-by-side benchmark of our resizer and upstream's (bench/run.ts). It does
# its own setup: system tools, npm dependencies, the cached components including the upstream Go
# csi-resizer, and our compiled build; then it runs every scenario (flags pass through, e.g.
# `npm run bench -- --scenarios burst-high --n 300 --rounds 2`; see `--help`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh

use_node_runtime
echo "== runtime: Node.js $(node --version)"
bash scripts/setup.sh --with-upstream
echo "== build"
npm run build --silent
echo "== benchmark"
exec node --import tsx bench/run.ts "$@"
