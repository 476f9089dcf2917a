#!/usr/bin/env bash
# `npm run e2e`: Kubernetes' own "[sig-storage] CSI Mock volume expansion" e2e specs and the
# csi-hostpath volume-expand and volume-modify (VolumeAttributesClass) specs on a one-node
# cluster built and started on this machine, once with upstream's csi-resizer image in the
# resizer sidecar slot and once with ours; then our own node tests (NODE_TESTS below: auto-grow on
# the real node), each starting the node again for itself. docs/e2e.md says what it builds, how
# the node is isolated and what the results mean; the README has the table.
#
#   npm run e2e [-- [--keep] [suite options: --suite mock|hostpath|autogrow|all --images upstream,ours,ours-uid1000 --procs N ...]]
#
# --suite all (the default) runs the specs and the node tests; mock or hostpath (or --focus) the
# specs alone; autogrow the node tests alone. --keep keeps the specs' node only.
#
# Needs root (network namespaces, mounts, cgroups), Go, the Go module proxy, Debian's package
# archive and the npm registry; a fresh machine builds everything first (see docs/e2e.md for
# how long), later runs find it cached under ${CSI_RESIZER_CACHE:-~/.cache/csi-resizer}.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh

# Test files that start the node themselves (e2e/node-session.ts), run after the specs' node is down.
NODE_TESTS=(e2e/auto-grow.test.ts)

node_args=()
suite_args=()
run_specs=1
run_node_tests=1
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) node_args+=(--keep); shift ;;
    --suite)
      case "${2:-}" in
        autogrow) run_specs=0 ;;
        mock | hostpath) run_node_tests=0; suite_args+=("$1" "$2") ;;
        *) suite_args+=("$1" "${2:-}") ;;
      esac
      shift 2 ;;
    --focus) run_node_tests=0; suite_args+=("$1" "${2:-}"); shift 2 ;;
    *) suite_args+=("$1"); shift ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "npm run e2e needs root (network namespaces, mounts, cgroups)" >&2; exit 1; }

start=$SECONDS
use_node_runtime
# npm dependencies and the image tools (podman, skopeo, umoci, runc); the Go components come next.
bash scripts/setup.sh --no-components --image-tools --arch=amd64
source e2e/prepare.sh
echo "== components and images ready in $((SECONDS - start))s"

# Each command runs in the background so that a signal sent to this script alone (not to the whole
# process group, as Ctrl-C is) reaches it at once: bash runs a trap only after the foreground
# command ends (and a background command ignores SIGINT: Ctrl-C reaches it as the TERM below).
# node.sh stops the suite and tears the node down on INT, TERM and HUP; a node test's node goes
# when the test process ends (its node.sh waits on a pipe from it). stdin stays ours.
exec 3<&0
interrupted=0
run_forwarding_signals() {
  "$@" <&3 &
  local pid=$! code
  trap 'interrupted=1; kill -TERM "'"$pid"'" 2>/dev/null || true' INT TERM HUP
  while :; do
    wait "$pid" && code=0 || code=$?
    # wait returns early (status > 128) when a trapped signal arrives; go on waiting for it.
    kill -0 "$pid" 2>/dev/null || break
  done
  trap - INT TERM HUP
  return "$code"
}

status=0
if [ "$run_specs" = 1 ]; then
  run_forwarding_signals bash e2e/node.sh run ${node_args[@]+"${node_args[@]}"} -- bash e2e/suite.sh ${suite_args[@]+"${suite_args[@]}"} || status=$?
fi
if [ "$run_node_tests" = 1 ] && [ "$interrupted" = 0 ]; then
  echo "== node tests: ${NODE_TESTS[*]}"
  mkdir -p e2e/results
  run_forwarding_signals node --import tsx --test --test-concurrency=1 --test-timeout=3600000 \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=junit --test-reporter-destination=e2e/results/junit-node-tests.xml "${NODE_TESTS[@]}" || status=1
fi
echo "== npm run e2e: $((SECONDS - start))s in all, exit $status"
exit "$status"
