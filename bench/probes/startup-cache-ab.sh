#!/usr/bin/env bash
# The compile cache shipped beside the bundle, A/B in one run, as a pod starts: the app directory
# (package.json, dist/) read-only and no writable temp directory. A is the app as built (with
# dist/compile-cache), B a copy without it. Both are bind-mounted read-only in a mount namespace of
# this run's own (root only), in which startup-probe.ts starts them alternately (the bench's start-up
# scenario: spawn to the first resize final, the CPU by then) with RESIZER_TMPDIR a directory that
# does not exist; then callgrind counts the instructions of `--version` (the runtime's start and
# the bundle's load; the machine's load does not move them) CG times each (default 2), alternating.
#
#   bash bench/probes/startup-cache-ab.sh APP_DIR ROUNDS [CG] > summary.txt   (OUT=<json> as for startup-probe.ts;
#                                                                            ROUNDS 0: callgrind only)
#
# APP_DIR: e.g. a build (`bash scripts/build.sh /tmp/app/dist && cp package.json /tmp/app/`) or an
# image's app layer unpacked. docs/performance.md, "Start-up: what runs before the first resize".
set -euo pipefail
cd "$(dirname "$0")/../.."
app=$(cd "${1:?usage: $0 APP_DIR ROUNDS [CG]}" && pwd)
rounds=${2:?usage: $0 APP_DIR ROUNDS [CG]}
cg=${3:-2}
[ "$(id -u)" = 0 ] || { echo "needs root (a mount namespace with read-only bind mounts)" >&2; exit 1; }
[ -d "$app/dist/compile-cache" ] || { echo "$app/dist/compile-cache does not exist" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/startup-cache-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -a "$app" "$work/shipped"
cp -a "$app" "$work/none"
rm -rf "$work/none/dist/compile-cache"
source scripts/node-runtime.sh
use_node_runtime
node_bin=$(command -v node)

unshare --mount bash -s "$work" "$rounds" "$cg" "$node_bin" <<'EOF'
set -euo pipefail
work=$1 rounds=$2 cg=$3 node_bin=$4
for v in shipped none; do mount --bind -o ro "$work/$v" "$work/$v"; done
if [ "$rounds" -gt 0 ]; then
  RESIZER_TMPDIR=/nonexistent node --import tsx bench/probes/startup-probe.ts "$rounds" "$work/shipped/dist/main.js" "$work/none/dist/main.js"
fi
# valgrind needs a writable TMPDIR (it reads the variable the program gets): the pod's lack of one
# is NODE_DISABLE_COMPILE_CACHE=1 here, which keeps B from Node's cache in the temp directory.
for i in $(seq 1 "$cg"); do
  for v in shipped none; do
    off=(); if [ "$v" = none ]; then off=(NODE_DISABLE_COMPILE_CACHE=1); fi
    (cd "$work/$v" && env -u NODE_EXTRA_CA_CERTS "${off[@]}" valgrind --tool=callgrind --smc-check=all-non-file \
      --callgrind-out-file="$work/cg-$v-$i.out" "$node_bin" --max-semi-space-size=2 dist/main.js --version >/dev/null 2>"$work/cg-$v-$i.log")
    echo "callgrind --version, $v cache, run $i: $(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$work/cg-$v-$i.log") instructions"
  done
done
EOF
