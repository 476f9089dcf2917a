#!/usr/bin/env bash
# `npm run test:matrix`: the integration suite against each supported kube-apiserver minor (the
# default `npm test` runs one, to keep CI within its time). Each version's kube-apiserver is built
# once from the Go module proxy and cached (test/infra/build-apiserver.sh); etcd, the CSI mock
# driver and our code are the same for every run. Prints one line per version and writes the table
# to bench/results/test-matrix-<date>.md.
#
#   npm run test:matrix                        # v1.35.4 v1.36.3, the default v1.37.2 and v1.38.0-beta.0
#   npm run test:matrix -- v1.35.4             # one version
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh
use_node_runtime

versions=("$@")
[ "${#versions[@]}" -gt 0 ] || versions=(v1.35.4 v1.36.3 default v1.38.0-beta.0)
bash scripts/setup.sh
mapfile -t files < <(find test/integration -name '*.test.ts' | sort)
out=bench/results/test-matrix-$(date -u +%Y-%m-%d).md
mkdir -p bench/results
{
  echo "| kube-apiserver | tests | passed | failed | duration |"
  echo "|---|---|---|---|---|"
} > "$out.tmp"
status=0
for v in "${versions[@]}"; do
  if [ "$v" = default ]; then
    unset CSI_RESIZER_KUBE_APISERVER_BIN CSI_RESIZER_K8S_VERSION
    label=$(sed -n 's/^K8S_VERSION=//p' "${CSI_RESIZER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-resizer}/bin/components.env")
  else
    CSI_RESIZER_KUBE_APISERVER_BIN=$(bash test/infra/build-apiserver.sh "$v" | tail -n 1)
    export CSI_RESIZER_KUBE_APISERVER_BIN CSI_RESIZER_K8S_VERSION=$v
    label=$v
  fi
  log=$(mktemp -t "test-matrix-$label-XXXX.log")
  echo "== kube-apiserver $label: ${#files[@]} integration test files (log: $log)"
  start=$SECONDS
  set +e
  node --import tsx test/cluster/run-with-cluster.ts -- \
    node --import tsx --test --test-concurrency=1 --test-timeout=300000 "${files[@]}" > "$log" 2>&1
  rc=$?
  set -e
  # node's closing lines: "ℹ tests N" (spec reporter) or "# tests N" (TAP).
  pass=$(sed -n 's/^\(# \|ℹ \)pass \([0-9]*\)$/\2/p' "$log" | tail -n 1)
  fail=$(sed -n 's/^\(# \|ℹ \)fail \([0-9]*\)$/\2/p' "$log" | tail -n 1)
  tests=$(sed -n 's/^\(# \|ℹ \)tests \([0-9]*\)$/\2/p' "$log" | tail -n 1)
  echo "   $label: ${tests:-?} tests, ${pass:-?} passed, ${fail:-?} failed, $((SECONDS - start)) s (exit $rc)"
  echo "| $label | ${tests:-?} | ${pass:-?} | ${fail:-?} | $((SECONDS - start)) s |" >> "$out.tmp"
  if [ "$rc" -ne 0 ]; then
    status=1
    grep -E '^not ok|^✖ ' "$log" | grep -v '^✖ failing tests' | sed 's/^/     /' || true
  fi
done
mv "$out.tmp" "$out"
echo "table written to $out"
exit "$status"
