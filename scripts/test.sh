#!/usr/bin/env bash
# The one test command (`npm test`): installs the pinned Node.js runtime and the dependencies,
# builds the real components (all cached outside the repository), type-checks, checks the layer
# map, the lint rules and the format (npm run lint), then runs every
# unit and integration test with node's own test runner against one local control plane started
# for this run, and the node smoke tests (e2e/smoke.test.ts, e2e/loopfs-smoke.test.ts: real volumes; e2e/node-chaos.test.ts: kubelet killed mid-resize), each starting a one-node cluster of
# its own (kubelet, containerd; e2e/node.sh). Everything from here on runs on the pinned runtime, whatever node started
# `npm test`: it comes first on PATH, and the tests spawn node through PATH or process.execPath.
# NODE_LTS=24 npm test runs the same on the other pinned LTS line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh

use_node_runtime
echo "== runtime: Node.js $(node --version) ($(command -v node))"
bash scripts/setup.sh --image-tools --arch=amd64,arm64
# The node smoke test (e2e/smoke.test.ts) starts a one-node cluster: its components and images
# are built here, once per version (e2e/build.sh, e2e/images.sh; docs/e2e.md says how long).
echo "== e2e node components and images"
source e2e/prepare.sh

echo "== type check"
npx tsc -p tsconfig.json --noEmit

# The layer map (dependency-cruiser), the lint rules (oxlint) and the format (prettier): seconds.
echo "== lint"
npm run --silent lint

mapfile -t files < <(find src test -name '*.test.ts' -not -path '*/node_modules/*' | sort; echo e2e/smoke.test.ts; echo e2e/loopfs-smoke.test.ts; echo e2e/node-chaos.test.ts)
if [ "${#files[@]}" -eq 0 ]; then
  echo "no test files found" >&2
  exit 1
fi

echo "== ${#files[@]} test files"
# One cluster for the whole run: test/cluster/run-with-cluster.ts starts it, exports its env to
# the test processes, and stops exactly what it started when they finish (or fail).
exec node --import tsx test/cluster/run-with-cluster.ts -- \
  node --import tsx --test --test-concurrency=1 --test-timeout=300000 "${files[@]}"
