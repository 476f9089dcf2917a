#!/usr/bin/env bash
# A local control plane (etcd, kube-apiserver, the CSI mock driver) that keeps running after the
# command returns, for the demo and for manual work.
#
#   scripts/cluster.sh up     # writes .cluster/env (kubeconfigs, CSI socket, logs) and .cluster/pids
#   scripts/cluster.sh down   # stops exactly the recorded pids
#   scripts/cluster.sh time 3 # starts and stops a throwaway cluster 3 times, printing both durations
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-runtime.sh
use_node_runtime
case "${1:-}" in
  up|down|time) exec node --import tsx test/cluster/cluster-cli.ts "$@" ;;
  *) echo "usage: $0 up|down|time [runs]" >&2; exit 2 ;;
esac
