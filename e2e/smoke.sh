#!/usr/bin/env bash
# `npm run e2e:smoke`: the node smoke tests on their own, e2e/smoke.test.ts (the mock driver)
# then e2e/loopfs-smoke.test.ts (real volumes). Each starts the one-node cluster itself
# (e2e/node.sh: builds what is missing, imports the images, tears everything down at the end), so
# it needs root, like `npm run e2e`. docs/e2e.md says how long it takes warm and cold.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh
[ "$(id -u)" = 0 ] || { echo "npm run e2e:smoke needs root (network namespaces, mounts, cgroups)" >&2; exit 1; }
start=$SECONDS
use_node_runtime
bash scripts/setup.sh --no-components --image-tools --arch=amd64
source e2e/prepare.sh
echo "== components and images ready in $((SECONDS - start))s"
status=0
node --import tsx --test --test-concurrency=1 --test-timeout=900000 e2e/smoke.test.ts e2e/loopfs-smoke.test.ts || status=$?
echo "== npm run e2e:smoke: $((SECONDS - start))s in all, exit $status"
exit "$status"
