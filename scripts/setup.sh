#!/usr/bin/env bash
# Everything a fresh machine needs before the tests or the demo: system tools, the pinned Node.js
# runtime (scripts/node-runtime.sh; every later step runs on it), npm dependencies from the
# lockfile, and the Go-built components (etcd, kube-apiserver, the CSI mock driver), which are
# cached outside the repository by version.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh

missing=()
command -v openssl >/dev/null || missing+=(openssl)
command -v go >/dev/null || { echo "Go 1.26+ is required to build the test components" >&2; exit 1; }
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing ${missing[*]}"
  apt-get update -qq && apt-get install -y -qq "${missing[@]}"
fi

use_node_runtime

stamp=node_modules/.package-lock.sha
want=$(sha256sum package-lock.json | cut -c1-64)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "== npm ci"
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
fi

echo "== components (built once per version; a cold build takes tens of minutes)"
bash test/infra/build-components.sh "$@" >/dev/null
