#!/usr/bin/env bash
# `npm run e2e`: Kubernetes' own "[sig-storage] CSI Mock volume expansion" e2e specs and the
# csi-hostpath volume-expand and volume-modify (VolumeAttributesClass) specs on a one-node
# cluster built and started on this machine, once with upstream's csi-resizer image in the
# resizer sidecar slot and once with ours. docs/e2e.md says what it builds, how the node is
# isolated and what the results mean; the README has the table.
#
#   npm run e2e [-- [--keep] [suite options: --suite mock|hostpath|all --images upstream,ours,ours-uid1000 --procs N ...]]
#
# Needs root (network namespaces, mounts, cgroups), Go, the Go module proxy, Debian's package
# archive and the npm registry; a fresh machine builds everything first (see docs/e2e.md for
# how long), later runs find it cached under ${CSI_RESIZER_CACHE:-~/.cache/csi-resizer}.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh

node_args=()
suite_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) node_args+=(--keep); shift ;;
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

status=0
# node.sh runs in the background so that a signal sent to this script alone (not to the whole
# process group, as Ctrl-C is) reaches it at once: bash runs a trap only after the foreground
# command ends (and a background command ignores SIGINT: Ctrl-C reaches node.sh as the TERM
# below). node.sh stops the suite and tears the node down on INT, TERM and HUP. stdin stays ours.
exec 3<&0
bash e2e/node.sh run ${node_args[@]+"${node_args[@]}"} -- bash e2e/suite.sh ${suite_args[@]+"${suite_args[@]}"} <&3 &
node_pid=$!
trap 'kill -TERM "$node_pid" 2>/dev/null || true' INT TERM HUP
while :; do
  wait "$node_pid" && status=0 || status=$?
  # wait returns early (status > 128) when a trapped signal arrives; go on waiting for node.sh.
  kill -0 "$node_pid" 2>/dev/null || break
done
trap - INT TERM HUP
echo "== npm run e2e: $((SECONDS - start))s in all, exit $status"
exit "$status"
